import { z } from 'zod';
import { parseOrThrow } from '../../foundation/validation.js';
import type { ChatModel } from '../../model/chat-model.js';
import { countMessageTokens } from '../../model/messages.js';
import type { MemoryFeature } from '../../runtime/feature.js';
import type { DroppedItem, MiddlewareResult, PromptMiddleware } from '../../runtime/middleware.js';
import { LexicalIndex } from '../../search/lexical-index.js';
import { coverage, queryTerms, relevance } from '../../search/relevance.js';
import type { DetailRecord } from '../../store/details/record.js';
import type { DetailStore } from '../../store/details/store.js';
import { chunkLines, type TextChunk } from '../../store/documents/chunker.js';
import type { Tokenizer } from '../../tokens/tokenizer.js';
import { defuse, detailSource } from '../trust/fence.js';
import { chooseRefsWithModel } from './expansion-model.js';
import { findMemoryRefs, formatMemoryRef, type MemoryRef } from './ref.js';

export const REF_EXPANSION_MIDDLEWARE = 'memory-ref-expansion';

export const REF_EXPANSION_DEFAULTS = Object.freeze({
  /** The newest refs of the context that are considered; older ones are dropped as `limit`. */
  maxRefs: 40,
  /** Size of the parts a stored output is cut into (the unit that is injected). */
  chunkTokens: 150,
  /** A part is injected when its relevance to the message (0–1, see `memoryRelevance`) reaches this. */
  minRelevance: 0.5,
  /** The model chooser's time limit. */
  timeoutMs: 3_000,
});

export const EXPANDED_REFS_START = '[EXPANDED_MEMORY_REFS]';
export const EXPANDED_REFS_END = '[END_EXPANDED_MEMORY_REFS]';
const HEADER =
  'Parts of stored outputs referenced above that match the new message. Each is only part of its output: call retrieve_memory with the id for the rest.';

const OptionsSchema = z.object({
  maxRefs: z.number().int().min(1).max(100).default(REF_EXPANSION_DEFAULTS.maxRefs),
  chunkTokens: z.number().int().min(20).max(2_000).default(REF_EXPANSION_DEFAULTS.chunkTokens),
  minRelevance: z.number().min(0).max(1).default(REF_EXPANSION_DEFAULTS.minRelevance),
  maxTokens: z.number().int().min(1).optional(),
  timeoutMs: z.number().int().min(1).default(REF_EXPANSION_DEFAULTS.timeoutMs),
});

export interface RefExpansionOptions {
  /** Where the outputs behind the placeholders are (the offload feature's detail store). */
  details: DetailStore;
  /** Newest refs considered (default 40). */
  maxRefs?: number;
  /** Size of the parts outputs are cut into, in tokens (default 150). */
  chunkTokens?: number;
  /** Lexical relevance a part needs, 0–1 (default 0.5). */
  minRelevance?: number;
  /** Most tokens for the block; the budget's `memory-ref-expansion` share applies too. */
  maxTokens?: number;
  /**
   * A model that decides which refs the message needs (one small structured call per turn with refs);
   * the parts of the refs it names are then chosen lexically. When it fails, answers malformed JSON or
   * exceeds `timeoutMs`, the lexical choice is used and the ledger entry notes it.
   */
  model?: ChatModel;
  /** The model's time limit in ms (default 3000). */
  timeoutMs?: number;
}

/**
 * Placeholder expansion (a lightweight step deciding whether any memory placeholders in the
 * context need expanding): for the `[MemoryRef: …]` placeholders in the context the middlewares before it
 * built (replayed history, memory blocks), it scores the parts of each stored output against the new
 * message and injects the relevant parts — never the whole output — within its budget, each under its
 * placeholder so the model can still call retrieve_memory for the rest. Register it after the features
 * whose messages hold the refs. Middleware name `memory-ref-expansion`.
 *
 * The ledger entry lists the refs expanded (`includedIds`) and those dropped: `irrelevant` (no part
 * relevant enough), `budget` (no relevant part fitted; single parts that did not fit are `<id>#<part>`),
 * `limit` (past `maxRefs`), `expired` (the output is gone). With `recall: 'never'` nothing is expanded.
 */
export function memoryRefExpansion(options: RefExpansionOptions): MemoryFeature {
  const settings = parseOrThrow(
    OptionsSchema,
    {
      maxRefs: options.maxRefs,
      chunkTokens: options.chunkTokens,
      minRelevance: options.minRelevance,
      maxTokens: options.maxTokens,
      timeoutMs: options.timeoutMs,
    },
    'memory ref expansion options',
  );
  const chunksOf = chunkCache(settings.chunkTokens);
  const middleware: PromptMiddleware = {
    name: REF_EXPANSION_MIDDLEWARE,
    placement: 'system',
    async inject(ctx): Promise<MiddlewareResult> {
      const refs = newestRefs(ctx.injected.map((m) => m.content).join('\n'));
      if (refs.length === 0) return { messages: [], included: 0, dropped: [] };
      if (ctx.recall.mode === 'never') {
        return {
          messages: [],
          included: 0,
          dropped: refs.map((ref) => ({ id: ref.id, reason: 'not-needed' })),
          notes: ["skipped: recall is off (recall: 'never')"],
        };
      }
      const dropped: DroppedItem[] = refs
        .slice(settings.maxRefs)
        .map((ref) => ({ id: ref.id, reason: 'limit' }));
      const details: DetailRecord[] = [];
      for (const ref of refs.slice(0, settings.maxRefs)) {
        const detail = await options.details.get(ctx.scope, ref.id);
        if (detail) details.push(detail);
        else dropped.push({ id: ref.id, reason: 'expired' });
      }
      const notes: string[] = [];
      let wanted: ReadonlySet<string> | undefined;
      if (options.model && details.length > 0) {
        const chosen = await chooseRefsWithModel(options.model, details, ctx, settings.timeoutMs);
        if (chosen.ok) wanted = chosen.ids;
        else notes.push(`model chooser failed (${chosen.code}: ${chosen.message}); parts chosen lexically`);
      }
      const scored = scoreChunks(details, ctx.userMessage, ctx.tokenizer, chunksOf);
      const limit = Math.min(ctx.maxTokens, settings.maxTokens ?? Number.POSITIVE_INFINITY);
      const candidates: Scored[] = [];
      for (const detail of details) {
        const parts = scored.get(detail.id) ?? [];
        const relevant = wanted
          ? wanted.has(detail.id)
            ? modelChoice(parts)
            : []
          : parts.filter((p) => p.relevance >= settings.minRelevance);
        if (relevant.length === 0) dropped.push({ id: detail.id, reason: 'irrelevant' });
        candidates.push(...relevant);
      }
      candidates.sort((a, b) => b.relevance - a.relevance);
      const fitted = fitParts(candidates, details, limit, ctx.tokenizer);
      const expanded = new Set(fitted.parts.map((p) => p.detail.id));
      for (const detail of details) {
        const had = candidates.some((c) => c.detail === detail);
        if (had && !expanded.has(detail.id)) dropped.push({ id: detail.id, reason: 'budget' });
      }
      for (const part of fitted.left) {
        if (expanded.has(part.detail.id)) {
          dropped.push({
            id: `${part.detail.id}#${part.chunk.index}`,
            reason: 'budget',
            tokens: part.chunk.tokenCount,
          });
        }
      }
      return {
        messages: fitted.message ? [{ role: 'system', content: fitted.message }] : [],
        included: expanded.size,
        includedIds: [...expanded],
        dropped,
        ...(notes.length > 0 ? { notes } : {}),
      };
    },
  };
  return { name: REF_EXPANSION_MIDDLEWARE, middleware };
}

interface Scored {
  detail: DetailRecord;
  chunk: TextChunk;
  /** How many parts the output has. */
  of: number;
  relevance: number;
}

/** The distinct refs of the context, the one mentioned last first. */
function newestRefs(text: string): MemoryRef[] {
  const all = findMemoryRefs(text);
  const seen = new Set<string>();
  const out: MemoryRef[] = [];
  for (let i = all.length - 1; i >= 0; i--) {
    const ref = all[i]!;
    if (seen.has(ref.id)) continue;
    seen.add(ref.id);
    out.push(ref);
  }
  return out;
}

/** Each output's parts, cut once per detail and tokenizer (details do not change). */
function chunkCache(chunkTokens: number) {
  const cache = new WeakMap<Tokenizer, Map<string, TextChunk[]>>();
  return (detail: DetailRecord, tokenizer: Tokenizer): TextChunk[] => {
    let byDetail = cache.get(tokenizer);
    if (!byDetail) {
      byDetail = new Map();
      cache.set(tokenizer, byDetail);
    }
    const key = `${detail.userId}\u0000${detail.id}`;
    let chunks = byDetail.get(key);
    if (!chunks) {
      chunks = chunkLines(detail.content, tokenizer, chunkTokens);
      if (byDetail.size >= 1_000) byDetail.delete(byDetail.keys().next().value!);
      byDetail.set(key, chunks);
    }
    return chunks;
  };
}

/**
 * Every part's relevance to the message: BM25 over all the parts of the refs (no query expansion: the
 * parts of one output share its vocabulary), normalized as the `relevant` fact mode does — half the score
 * relative to the best part, half the share of the message's terms the part holds.
 */
function scoreChunks(
  details: readonly DetailRecord[],
  message: string,
  tokenizer: Tokenizer,
  chunksOf: (detail: DetailRecord, tokenizer: Tokenizer) => TextChunk[],
): Map<string, Scored[]> {
  const index = new LexicalIndex({ feedback: false });
  const parts = new Map<string, Scored>();
  const out = new Map<string, Scored[]>();
  for (const detail of details) {
    const scored: Scored[] = [];
    const chunks = chunksOf(detail, tokenizer);
    for (const chunk of chunks) {
      const key = `${detail.id}#${chunk.index}`;
      index.set(key, chunk.text);
      const part = { detail, chunk, of: chunks.length, relevance: 0 };
      parts.set(key, part);
      scored.push(part);
    }
    out.set(detail.id, scored);
  }
  const terms = queryTerms(message);
  const hits = index.search(message);
  const best = hits[0]?.score ?? 0;
  for (const hit of hits) {
    const part = parts.get(hit.id)!;
    part.relevance = relevance(hit.score, best, coverage(terms, part.chunk.text));
  }
  return out;
}

/** The parts of a ref the model chose: those that match the message, else its first part. */
function modelChoice(parts: readonly Scored[]): Scored[] {
  const matching = parts.filter((p) => p.relevance > 0);
  if (matching.length > 0) return matching;
  return parts.length > 0 ? [{ ...parts[0]!, relevance: 0 }] : [];
}

/**
 * Best parts first while they fit; the block groups them under their placeholder, parts in output order.
 * Costs are estimated per part and the final message is counted exactly (and trimmed if the estimate
 * was low), so the limit holds.
 */
function fitParts(
  candidates: readonly Scored[],
  details: readonly DetailRecord[],
  limit: number,
  tokenizer: Tokenizer,
): { message: string | undefined; parts: Scored[]; left: Scored[] } {
  const chosen: Scored[] = [];
  const left: Scored[] = [];
  const wrapper = countMessageTokens(tokenizer, { role: 'system', content: render([], details) });
  let used = wrapper;
  const headed = new Set<string>();
  for (const part of candidates) {
    const heading = headed.has(part.detail.id) ? 0 : tokenizer.count(headingOf(part.detail)) + 2;
    const cost = part.chunk.tokenCount + tokenizer.count(partLabel(part)) + heading + 2;
    if (used + cost > limit) {
      left.push(part);
      continue;
    }
    chosen.push(part);
    headed.add(part.detail.id);
    used += cost;
  }
  let message = chosen.length > 0 ? render(chosen, details) : undefined;
  while (message && countMessageTokens(tokenizer, { role: 'system', content: message }) > limit) {
    left.push(chosen.pop()!);
    message = chosen.length > 0 ? render(chosen, details) : undefined;
  }
  return { message, parts: chosen, left };
}

function headingOf(detail: DetailRecord): string {
  return formatMemoryRef({ id: detail.id, description: detail.description, tokens: detail.tokenCount });
}

function partLabel(part: Scored): string {
  return `(part ${part.chunk.index + 1} of ${part.of}, from ${detailSource(part.detail)})`;
}

function render(parts: readonly Scored[], details: readonly DetailRecord[]): string {
  const sections: string[] = [];
  for (const detail of details) {
    const mine = parts.filter((p) => p.detail === detail).sort((a, b) => a.chunk.index - b.chunk.index);
    if (mine.length === 0) continue;
    sections.push(
      [headingOf(detail), ...mine.map((p) => `${partLabel(p)}\n${defuse(p.chunk.text)}`)].join('\n'),
    );
  }
  return [EXPANDED_REFS_START, HEADER, ...sections, EXPANDED_REFS_END].join('\n\n');
}
