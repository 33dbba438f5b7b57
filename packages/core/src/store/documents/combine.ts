import { z } from 'zod';
import { parseOrThrow } from '../../foundation/validation.js';
import type { Tokenizer } from '../../tokens/tokenizer.js';
import type { CombinedKnowledge, KnowledgeDocument } from './record.js';

const MaxTokensSchema = z.number().int().min(0).max(10_000_000);

/** `combinedText`'s token budget, checked: a whole number from 0 to 10 million. */
export function parseKnowledgeBudget(maxTokens: number): number {
  return parseOrThrow(MaxTokensSchema, maxTokens, 'maxTokens');
}

/**
 * What every DocumentStore's `combinedText` returns (FullTextInjection): the documents, in the order
 * given (oldest first), as `## title` sections separated by a blank line, within `maxTokens` as
 * `tokenizer` counts them. The first section that does not fit is cut on a token boundary (and kept
 * unless nothing but whitespace is left of it); nothing after it is included.
 */
export function combineKnowledge(
  documents: Iterable<Pick<KnowledgeDocument, 'id' | 'title' | 'text'>>,
  maxTokens: number,
  tokenizer: Tokenizer,
): CombinedKnowledge {
  const sections: string[] = [];
  const documentIds: string[] = [];
  let used = 0;
  let truncated = false;
  for (const doc of documents) {
    const section = `${sections.length ? '\n\n' : ''}## ${doc.title}\n${doc.text}`;
    const tokens = tokenizer.count(section);
    if (used + tokens <= maxTokens) {
      sections.push(section);
      documentIds.push(doc.id);
      used += tokens;
      continue;
    }
    truncated = true;
    const cut = tokenizer.truncate(section, maxTokens - used);
    if (cut.trim()) {
      sections.push(cut);
      documentIds.push(doc.id);
      used += tokenizer.count(cut);
    }
    break;
  }
  return { text: sections.join(''), tokenCount: used, documentIds, truncated };
}
