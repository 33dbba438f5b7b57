import { LIMITS } from '../../foundation/limits.js';
import type { Scope } from '../../foundation/scope.js';
import { type ChatMessage, countMessageTokens } from '../../model/messages.js';
import { BlockCache } from '../../runtime/block-cache.js';
import type {
  DroppedItem,
  MiddlewareContext,
  MiddlewareResult,
  PrefetchContext,
  PromptMiddleware,
} from '../../runtime/middleware.js';
import { combineKnowledge } from '../../store/documents/combine.js';
import type { DocumentChunkHit, KnowledgeDocument } from '../../store/documents/record.js';
import type { DocumentStore } from '../../store/documents/store.js';
import type { Tokenizer } from '../../tokens/tokenizer.js';
import { detectInjection } from '../trust/detector.js';
import { defuse, documentSource } from '../trust/fence.js';
import { documentsMark } from './documents-mark.js';
import { chunkSection, renderStaticKnowledge } from './format.js';

export const KNOWLEDGE_MIDDLEWARE = 'knowledge';

/** Two strategies: every document's text, or the chunks that match the user message. */
export type KnowledgeStrategy = 'full-text' | 'indexed';

export interface KnowledgeMiddlewareOptions {
  store: DocumentStore;
  strategy: KnowledgeStrategy;
  maxTokens?: number;
  owner?: Scope;
  topK: number;
}

const system = (content: string): ChatMessage => ({ role: 'system', content });
const empty = (dropped: DroppedItem[] = []): MiddlewareResult => ({ messages: [], included: 0, dropped });

/**
 * Injects the agent's knowledge documents as one `[STATIC_KNOWLEDGE]`
 * system message within min(allotted tokens, `maxTokens`), reading from `owner` when given, else from the
 * turn's user + agent.
 */
export function knowledgeMiddleware(options: KnowledgeMiddlewareOptions): PromptMiddleware {
  const count = lastCount();
  const trust = documentTrust();
  const blocks = new BlockCache();
  return {
    name: KNOWLEDGE_MIDDLEWARE,
    placement: 'system',
    // Full text: the store's revision, which says whether last turn's block still holds.
    ...(options.strategy !== 'indexed' && options.store.revision
      ? { prefetch: (ctx: PrefetchContext) => options.store.revision!(ownerOf(options, ctx.scope)) }
      : {}),
    inject(ctx) {
      const scope = ownerOf(options, ctx.scope);
      const limit = Math.min(ctx.maxTokens, options.maxTokens ?? Number.POSITIVE_INFINITY);
      return options.strategy === 'indexed'
        ? injectIndexed(options, scope, limit, ctx, trust)
        : injectFullText(options.store, scope, limit, ctx, count, trust, blocks);
    },
  };
}

/** Whose documents the block shows: the configured owner's, else the turn's user's (and agent's). */
function ownerOf(options: KnowledgeMiddlewareOptions, scope: Readonly<Scope>): Scope {
  return options.owner ?? { userId: scope.userId, agentId: scope.agentId };
}

type MessageCounter = (tokenizer: Tokenizer, message: ChatMessage) => number;

/**
 * `countMessageTokens` remembering its last message: full-text knowledge is usually the same text
 * every turn (thousands of tokens), and comparing two strings is far cheaper than BPE-counting one.
 */
function lastCount(): MessageCounter {
  let last: { tokenizer: Tokenizer; content: string; tokens: number } | undefined;
  return (tokenizer, message) => {
    if (last?.tokenizer === tokenizer && last.content === message.content) return last.tokens;
    const tokens = countMessageTokens(tokenizer, message);
    last = { tokenizer, content: message.content, tokens };
    return tokens;
  };
}

/**
 * Whether a document may be injected, remembered per document (id and time added): a document whose
 * text reads like instructions is quarantined (`detectInjection`) unless the user confirmed it
 * (`metadata.trust: 'confirmed'`).
 */
function documentTrust(): (doc: KnowledgeDocument) => boolean {
  const verdicts = new Map<string, boolean>();
  return (doc) => {
    if (doc.metadata.trust === 'confirmed') return true;
    const key = `${doc.userId}\u0000${doc.id}\u0000${doc.addedAt}`;
    let trusted = verdicts.get(key);
    if (trusted === undefined) {
      trusted = !detectInjection(`${doc.title}\n${doc.text}`).flagged;
      if (verdicts.size >= 10_000) verdicts.clear();
      verdicts.set(key, trusted);
    }
    return trusted;
  };
}

/**
 * A document as injection quotes it: its heading names where it was read from (a URL or a file; text the
 * app gave has no source to name), its text is defused.
 */
function fenced(doc: KnowledgeDocument): Pick<KnowledgeDocument, 'id' | 'title' | 'text'> {
  const title = doc.source.uri === undefined ? doc.title : `${doc.title} (from ${documentSource(doc)})`;
  return { id: doc.id, title, text: defuse(doc.text) };
}

/**
 * FullTextInjection: `combineKnowledge` over the trusted documents (oldest first as `## title` sections, the last one cut on a
 * token boundary) inside the markers. The wrapper's tokens are reserved first; if BPE merges at the seams
 * make the whole message a few tokens longer than the parts, the text is asked for again that much shorter.
 * A cut that leaves a document no more than (part of) its heading is removed. Documents left out are
 * dropped with reason `budget`; a document cut short but present counts as included.
 */
async function injectFullText(
  store: DocumentStore,
  scope: Scope,
  limit: number,
  ctx: MiddlewareContext,
  count: MessageCounter,
  trusted: (doc: KnowledgeDocument) => boolean,
  blocks: BlockCache,
): Promise<MiddlewareResult> {
  // The same documents as last turn, the same limit: the same block (fencing and cutting them is not free).
  // A store with a revision says so without the documents being read (on a remote store, their whole text);
  // read before the list, so a write in between only makes the next turn build again.
  const read = (ctx.prefetched as Promise<string> | undefined) ?? store.revision?.(scope);
  const revision = read ? `revision ${await read}` : undefined;
  const unchanged = revision !== undefined && blocks.get(scope, ctx.tokenizer, limit, revision);
  if (unchanged) return unchanged;
  const all = await store.list(scope);
  const mark = revision ?? documentsMark(all);
  const cached = revision === undefined && blocks.get(scope, ctx.tokenizer, limit, mark);
  if (cached) return cached;
  const result = fullTextBlock(all, limit, ctx, count, trusted);
  blocks.set(scope, ctx.tokenizer, limit, mark, result);
  return result;
}

function fullTextBlock(
  all: readonly KnowledgeDocument[],
  limit: number,
  ctx: MiddlewareContext,
  count: MessageCounter,
  trusted: (doc: KnowledgeDocument) => boolean,
): MiddlewareResult {
  const quarantined: DroppedItem[] = all
    .filter((doc) => !trusted(doc))
    .map((doc) => ({ id: doc.id, reason: 'quarantined', tokens: doc.tokenCount }));
  const documents = all.filter(trusted).map(fenced);
  if (documents.length === 0) return empty(quarantined);
  const titles = new Map(documents.map((doc) => [doc.id, doc.title]));
  const wrapper = countMessageTokens(ctx.tokenizer, system(renderStaticKnowledge('')));
  let textBudget = limit - wrapper;
  let message: ChatMessage | undefined;
  let included: string[] = [];
  while (textBudget > 0) {
    const combined = combineKnowledge(documents, textBudget, ctx.tokenizer);
    let text = combined.text;
    let ids = combined.documentIds;
    const last = ids.at(-1);
    if (combined.truncated && last !== undefined) {
      const trimmed = withoutBareHeading(text, titles.get(last) ?? '');
      if (trimmed !== text) {
        text = trimmed;
        ids = ids.slice(0, -1);
      }
    }
    if (!text.trim()) break;
    const candidate = system(renderStaticKnowledge(text));
    const over = count(ctx.tokenizer, candidate) - limit;
    if (over <= 0) {
      message = candidate;
      included = ids;
      break;
    }
    textBudget -= over;
  }
  const kept = new Set(included);
  const dropped: DroppedItem[] = [
    ...quarantined,
    ...all
      .filter((doc) => trusted(doc) && !kept.has(doc.id))
      .map((doc): DroppedItem => ({ id: doc.id, reason: 'budget', tokens: doc.tokenCount })),
  ];
  return message ? { messages: [message], included: included.length, dropped } : empty(dropped);
}

/** `text` without its last section when the cut left that section only (part of) its `## title` line. */
function withoutBareHeading(text: string, title: string): string {
  const heading = `## ${title}`;
  const at = text.lastIndexOf(heading);
  if (at >= 0 && (at === 0 || text.slice(at - 2, at) === '\n\n')) {
    return text.slice(at + heading.length).trim() ? text : text.slice(0, Math.max(0, at - 2));
  }
  const separator = text.lastIndexOf('\n\n');
  const tail = text.slice(separator < 0 ? 0 : separator + 2);
  return heading.startsWith(tail) ? text.slice(0, Math.max(0, separator)) : text;
}

/**
 * IndexedRetrieval: the `topK` chunks that best match the user message (the store's lexical search over
 * chunk text, document title and tags), added best-first as `## title (part n)` sections until the next
 * one does not fit; it and the rest are dropped with reason `budget`. No match, no message.
 */
async function injectIndexed(
  options: KnowledgeMiddlewareOptions,
  scope: Scope,
  limit: number,
  ctx: MiddlewareContext,
  trusted: (doc: KnowledgeDocument) => boolean,
): Promise<MiddlewareResult> {
  const query = ctx.userMessage.trim().slice(0, LIMITS.queryChars);
  if (!query) return empty();
  const found = await options.store.search(scope, { query, limit: options.topK });
  const dropped: DroppedItem[] = [];
  const hits: DocumentChunkHit[] = [];
  const documents = new Map<string, KnowledgeDocument | null>();
  for (const hit of found) {
    if (!documents.has(hit.documentId))
      documents.set(hit.documentId, await options.store.get(scope, hit.documentId));
    const doc = documents.get(hit.documentId);
    if (doc && !trusted(doc)) dropped.push({ ...droppedChunk(hit), reason: 'quarantined' });
    else hits.push(doc ? { ...hit, title: fenced(doc).title } : hit);
  }
  const sections: string[] = [];
  let message: ChatMessage | undefined;
  for (const [i, hit] of hits.entries()) {
    const candidate = system(renderStaticKnowledge([...sections, chunkSection(hit)].join('\n\n')));
    if (countMessageTokens(ctx.tokenizer, candidate) > limit) {
      dropped.push(...hits.slice(i).map(droppedChunk));
      break;
    }
    sections.push(chunkSection(hit));
    message = candidate;
  }
  return message ? { messages: [message], included: sections.length, dropped } : empty(dropped);
}

function droppedChunk(hit: DocumentChunkHit): DroppedItem {
  return { id: `${hit.documentId}#${hit.chunk.index}`, reason: 'budget', tokens: hit.chunk.tokenCount };
}
