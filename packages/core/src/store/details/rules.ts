import type { z } from 'zod';
import { ConflictError } from '../../foundation/errors.js';
import { shortId } from '../../foundation/ids.js';
import type { Scope } from '../../foundation/scope.js';
import { parseOrThrow } from '../../foundation/validation.js';
import type { LexicalIndex } from '../../search/lexical-index.js';
import type { Tokenizer } from '../../tokens/tokenizer.js';
import {
  type DetailFilterSchema,
  type DetailHit,
  type DetailInput,
  DetailInputSchema,
  type DetailRecord,
  DetailRecordSchema,
} from './record.js';

/*
 * What every DetailStore decides the same way — core's partitioned store and the adapters alike: what
 * `create` stores, what a record is found by, which records a filter keeps and, for stores that search
 * with core's LexicalIndex and filter in memory, how list and search apply it.
 */

/** The record `create` stores (input checked here): active, its content's tokens counted, agent and thread recorded. */
export function newDetail(scope: Scope, input: DetailInput, tokenizer: Tokenizer, now: string): DetailRecord {
  const data = parseOrThrow(DetailInputSchema, input, 'detail');
  return parseOrThrow(
    DetailRecordSchema,
    {
      ...data,
      id: data.id ?? shortId(),
      userId: scope.userId,
      agentId: scope.agentId,
      threadId: scope.threadId,
      tokenCount: tokenizer.count(data.content),
      createdAt: now,
      active: true,
    },
    'detail',
  );
}

/** What `create` throws when the user already has a detail with the id. */
export function detailExistsError(id: string): ConflictError {
  return new ConflictError(`A detail with id "${id}" already exists.`);
}

/** The text a detail is found by, lexically and by vector: description, summary, type as words, content. */
export function detailSearchText(
  d: Pick<DetailRecord, 'description' | 'summary' | 'type' | 'content'>,
): string {
  return [d.description, d.summary ?? '', d.type.replace(/_/g, ' '), d.content].join('\n');
}

/** A detail's entry in a LexicalIndex, keyed by its id. */
export function detailIndexEntries(d: DetailRecord): Array<{ key: string; text: string }> {
  return [{ key: d.id, text: detailSearchText(d) }];
}

/** Which details `list` and `search` keep (checked options, limit and query aside). */
export type DetailFilter = z.output<typeof DetailFilterSchema>;

/** True when the filter keeps the detail: active unless `includeInactive`, and of the type, agent and thread given. */
export function detailMatches(d: DetailRecord, f: DetailFilter): boolean {
  return (
    (f.includeInactive || d.active) &&
    (f.type === undefined || d.type === f.type) &&
    (f.agentId === undefined || d.agentId === f.agentId) &&
    (f.threadId === undefined || d.threadId === f.threadId)
  );
}

/** What `get` returns for a record read by id: null when absent, or inactive unless `includeInactive`. */
export function visibleDetail(
  record: DetailRecord | null | undefined,
  options: { includeInactive?: boolean },
): DetailRecord | null {
  if (!record || (!record.active && !options.includeInactive)) return null;
  return record;
}

/** `list` over a user's details in insertion order: those the filter keeps, newest first, at most `limit`. */
export function listDetails(
  oldestFirst: Iterable<DetailRecord>,
  f: DetailFilter & { limit?: number | undefined },
): DetailRecord[] {
  const out: DetailRecord[] = [];
  for (const d of oldestFirst) if (detailMatches(d, f)) out.push(d);
  out.reverse();
  return f.limit === undefined ? out : out.slice(0, f.limit);
}

/** A user's details, indexed by detailIndexEntries. */
export interface IndexedDetails {
  get(id: string): DetailRecord | undefined;
  index(): LexicalIndex;
}

/** `search` over a partition indexed by detailIndexEntries: the best details the filter keeps. */
export function searchDetails(
  partition: IndexedDetails,
  query: DetailFilter & { query: string; limit: number },
): DetailHit[] {
  return partition
    .index()
    .search(query.query, { limit: query.limit, filter: (id) => detailMatches(partition.get(id)!, query) })
    .map((hit) => ({ detail: partition.get(hit.id)!, score: hit.score }));
}
