import { CapacityError } from '../errors.js';
import { categoryMatches, hasAllTags } from '../records/common.js';
import type { Scope } from '../scope.js';
import { parseOrThrow } from '../validation.js';
import {
  keyHasPrefix,
  type WorkingEntry,
  type WorkingEntryInfo,
  WorkingEntrySchema,
  WorkingKeySchema,
  type WorkingQuery,
  type WorkingSetOptions,
  WorkingSetOptionsSchema,
} from './record.js';

/*
 * What every WorkingMemoryStore decides the same way — core's partitioned store and the adapters alike:
 * what `set` stores, when an entry is live, how many entries a full namespace gives up, and what is
 * searched. The adapters only count, evict and write (in SQL, or in one Lua script).
 */

/** The entry `set` stores (key and options checked here): stored at `nowMs`, expiring `ttlMs` (or `defaultTtlMs`) later. */
export function newWorkingEntry(
  scope: Scope,
  key: string,
  value: string,
  options: WorkingSetOptions,
  nowMs: number,
  defaultTtlMs: number,
): WorkingEntry {
  parseOrThrow(WorkingKeySchema, key, 'working-memory key');
  const opts = parseOrThrow(WorkingSetOptionsSchema, options, 'working-memory options');
  return parseOrThrow(
    WorkingEntrySchema,
    {
      key,
      userId: scope.userId,
      agentId: scope.agentId,
      value,
      storedAt: new Date(nowMs).toISOString(),
      expiresAt: new Date(nowMs + (opts.ttlMs ?? defaultTtlMs)).toISOString(),
      category: opts.category,
      tags: opts.tags,
    },
    'working-memory entry',
  );
}

/** True while the entry's expiry is after `nowMs`: stores never return an entry that is not. */
export function isWorkingEntryLive(entry: Pick<WorkingEntry, 'expiresAt'>, nowMs: number): boolean {
  return Date.parse(entry.expiresAt) > nowMs;
}

/** What `set` throws when the namespace is full and the store rejects rather than evicts. */
export function namespaceFullError(namespace: string, cap: number): CapacityError {
  return new CapacityError(
    `Working-memory namespace "${namespace}" is full (${cap} entries); delete one or wait for expiry.`,
    { details: { namespace, cap } },
  );
}

/**
 * How many of the namespace's oldest live entries a `set` evicts, given how many live entries other than
 * the key being set it holds; throws namespaceFullError instead when the store rejects at the cap.
 */
export function namespaceEvictions(
  namespace: string,
  liveOthers: number,
  limits: { cap: number; onCapacity: 'evict-oldest' | 'reject' },
): number {
  if (liveOthers >= limits.cap && limits.onCapacity === 'reject') {
    throw namespaceFullError(namespace, limits.cap);
  }
  return Math.max(0, liveOthers - limits.cap + 1);
}

/** The text an entry is found by: key and category as words, tags, value. */
export function workingSearchText(entry: Pick<WorkingEntry, 'key' | 'category' | 'tags' | 'value'>): string {
  return [
    entry.key.replace(/[/_.-]/g, ' '),
    entry.category?.replace(/[/_-]/g, ' ') ?? '',
    entry.tags.join(' '),
    entry.value,
  ].join('\n');
}

/** True when `search` keeps the entry (liveness aside): under the prefix, of the category and with all the tags. */
export function workingQueryMatches(
  entry: WorkingEntry,
  query: Pick<WorkingQuery, 'prefix' | 'category' | 'tags'>,
): boolean {
  return (
    (!query.prefix || keyHasPrefix(entry.key, query.prefix)) &&
    (!query.category || (entry.category !== undefined && categoryMatches(entry.category, query.category))) &&
    hasAllTags(entry.tags, query.tags)
  );
}

/** An entry without its value, as `list` returns it. */
export function workingEntryInfo(entry: WorkingEntry): WorkingEntryInfo {
  const { value: _value, ...rest } = entry;
  return rest;
}
