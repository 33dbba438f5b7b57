import { CapacityError } from '../../foundation/errors.js';
import { categoryMatches, hasAllTags } from '../../foundation/record-fields.js';
import type { Scope } from '../../foundation/scope.js';
import { parseOrThrow } from '../../foundation/validation.js';
import { checkVersion } from '../../foundation/version.js';
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

/** What a `set` writes, before it knows the key's live entry: see `versionedWorkingEntry`. */
export interface WorkingSet {
  /** The entry as it is stored when the key has no live entry (version 1). */
  entry: WorkingEntry;
  /** The caller's `expectedVersion` (validated): 0 for "only if there is no live entry". */
  expectedVersion: number | undefined;
}

/**
 * What `set` stores (key and options checked here): stored at `nowMs`, expiring `ttlMs` (or
 * `defaultTtlMs`) later, at version 1 until `versionedWorkingEntry` places it after the live entry.
 */
export function newWorkingSet(
  scope: Scope,
  key: string,
  value: string,
  options: WorkingSetOptions,
  nowMs: number,
  defaultTtlMs: number,
): WorkingSet {
  parseOrThrow(WorkingKeySchema, key, 'working-memory key');
  const opts = parseOrThrow(WorkingSetOptionsSchema, options, 'working-memory options');
  const entry = parseOrThrow(
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
      version: 1,
    },
    'working-memory entry',
  );
  return { entry, expectedVersion: opts.expectedVersion };
}

/**
 * The entry a `set` stores over the key's live entry (`live`, undefined when there is none — an expired
 * entry is none): version 1 when there is none, one more than the live entry's otherwise. CONFLICT when
 * the caller's `expectedVersion` differs from the live entry's version (0 when there is none). Call it
 * inside the store's atomic step, with the live entry read in that step.
 */
export function versionedWorkingEntry(
  set: WorkingSet,
  live: Pick<WorkingEntry, 'version'> | undefined,
): WorkingEntry {
  checkWorkingVersion(set.entry.key, live?.version ?? 0, set.expectedVersion);
  return live === undefined ? set.entry : { ...set.entry, version: live.version + 1 };
}

/** CONFLICT when `expectedVersion` is given and differs from `actual` (0: the key has no live entry). */
export function checkWorkingVersion(key: string, actual: number, expectedVersion: number | undefined): void {
  checkVersion(`working-memory entry "${key}"`, actual, expectedVersion);
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
