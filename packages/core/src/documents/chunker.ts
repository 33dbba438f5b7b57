import type { Tokenizer } from '../tokenizer.js';

export interface TextChunk {
  index: number;
  text: string;
  tokenCount: number;
}

const PARAGRAPH_BREAK = /\n\s*\n/;
const SENTENCE_END = /(?<=[.!?])\s+(?=\S)/;

/**
 * Split text into chunks of at most `maxTokens` tokens, preferring paragraph, then sentence boundaries;
 * a single sentence longer than the limit is cut on token boundaries.
 */
export function chunkText(text: string, tokenizer: Tokenizer, maxTokens: number): TextChunk[] {
  const pieces: string[] = [];
  for (const paragraph of text.split(PARAGRAPH_BREAK)) {
    const trimmed = paragraph.trim();
    if (!trimmed) continue;
    if (tokenizer.count(trimmed) <= maxTokens) pieces.push(trimmed);
    else
      for (const sentence of trimmed.split(SENTENCE_END))
        pieces.push(...hardSplit(sentence, tokenizer, maxTokens));
  }

  const chunks: TextChunk[] = [];
  let current = '';
  let currentTokens = 0;
  const flush = () => {
    if (current) chunks.push({ index: chunks.length, text: current, tokenCount: currentTokens });
    current = '';
    currentTokens = 0;
  };
  for (const piece of pieces) {
    const joined = current ? `${current}\n\n${piece}` : piece;
    const joinedTokens = tokenizer.count(joined);
    if (current && joinedTokens > maxTokens) {
      flush();
      current = piece;
      currentTokens = tokenizer.count(piece);
    } else {
      current = joined;
      currentTokens = joinedTokens;
    }
  }
  flush();
  return chunks;
}

function hardSplit(text: string, tokenizer: Tokenizer, maxTokens: number): string[] {
  const out: string[] = [];
  let rest = text.trim();
  while (rest) {
    if (tokenizer.count(rest) <= maxTokens) {
      out.push(rest);
      break;
    }
    const head = tokenizer.truncate(rest, maxTokens);
    // A cut inside a multi-byte character can decode to nothing; always make progress.
    const taken = head.length > 0 ? head : rest.slice(0, 1);
    out.push(taken.trim());
    rest = rest.slice(taken.length).trim();
  }
  return out.filter(Boolean);
}
