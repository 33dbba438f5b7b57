import { type Clock, systemClock } from '../../foundation/clock.js';
import { parseScope, type Scope, type SnapshotSelector } from '../../foundation/scope.js';
import { parseOrThrow } from '../../foundation/validation.js';
import { parseWriteOptions, type WriteOptions } from '../../foundation/version.js';
import type { PartitionBackend, PartitionCodec, PartitionRef } from '../backend/partition.js';
import { type RecordPartition, recordPartitionCodec } from '../backend/record-partition.js';
import {
  erasePartitions,
  groupByPartition,
  restorePartitions,
  type SnapshotMapping,
  snapshotPartitions,
} from '../backend/snapshot-io.js';
import type { RestoreOptions, RestoreReport, SnapshotEnvelope } from '../snapshot/envelope.js';
import {
  keyHasPrefix,
  keyRootOf,
  namespaceOf,
  type WorkingEntry,
  type WorkingEntryInfo,
  WorkingEntrySchema,
  type WorkingHit,
  WorkingKeySchema,
  WorkingPrefixSchema,
  type WorkingQuery,
  WorkingQuerySchema,
  type WorkingSetOptions,
} from './record.js';
import {
  checkWorkingVersion,
  isWorkingEntryLive,
  namespaceEvictions,
  newWorkingSet,
  versionedWorkingEntry,
  workingEntryInfo,
  workingQueryMatches,
  workingSearchText,
} from './rules.js';
import type { WorkingMemoryStore } from './store.js';

export interface WorkingMemoryOptions {
  clock?: Clock;
  /** Time to live when `set` gives none (default 5 minutes). */
  defaultTtlMs?: number;
  /** Live entries per namespace (first two key segments); default 50. */
  maxEntriesPerNamespace?: number;
  /** At the cap: evict the namespace's oldest entry (default) or throw CapacityError. */
  onCapacity?: 'evict-oldest' | 'reject';
}

export const WORKING_DEFAULTS = Object.freeze({ defaultTtlMs: 5 * 60 * 1000, maxEntriesPerNamespace: 50 });

/** A WorkingMemoryStore's limits: its options, or the defaults. */
export interface WorkingLimits {
  defaultTtlMs: number;
  /** Live entries per namespace. */
  cap: number;
  onCapacity: 'evict-oldest' | 'reject';
}

export function workingLimits(
  options: Pick<WorkingMemoryOptions, 'defaultTtlMs' | 'maxEntriesPerNamespace' | 'onCapacity'>,
): WorkingLimits {
  return {
    defaultTtlMs: options.defaultTtlMs ?? WORKING_DEFAULTS.defaultTtlMs,
    cap: options.maxEntriesPerNamespace ?? WORKING_DEFAULTS.maxEntriesPerNamespace,
    onCapacity: options.onCapacity ?? 'evict-oldest',
  };
}

type WorkingPartition = RecordPartition<WorkingEntry>;

/** Entries are grouped into one partition per root segment (`session`, `patrol`, `subagent`). */
function refFor(scope: Scope, key: string): PartitionRef {
  return { kind: 'working', userId: scope.userId, agentId: scope.agentId, name: keyRootOf(key) };
}

/**
 * WorkingMemoryStore over any PartitionBackend. Expired entries are never returned, are removed from a
 * partition on every write to it, and from everything by `sweep()`.
 */
export class PartitionedWorkingMemoryStore implements WorkingMemoryStore {
  readonly #backend: PartitionBackend;
  readonly #clock: Clock;
  readonly #limits: WorkingLimits;
  readonly #codec: PartitionCodec<WorkingPartition>;
  readonly #mapping: SnapshotMapping<WorkingEntry, WorkingPartition>;

  constructor(options: WorkingMemoryOptions & { backend: PartitionBackend }) {
    this.#backend = options.backend;
    this.#clock = options.clock ?? systemClock;
    this.#limits = workingLimits(options);
    const live = (entry: WorkingEntry) => this.#isLive(entry);
    this.#codec = recordPartitionCodec<WorkingEntry>('working', WorkingEntrySchema, {
      idOf: (e) => e.key,
      indexEntries: (e) => [{ key: e.key, text: workingSearchText(e) }],
    });
    const codec = this.#codec;
    this.#mapping = {
      kind: 'working',
      recordSchema: WorkingEntrySchema,
      codec,
      recordsOf: (state) => [...state.records.values()].filter(live),
      userIdOf: (e) => e.userId,
      toPartitions: (entries) =>
        groupByPartition(
          entries.filter(live),
          (e) => refFor(e, e.key),
          (e) => e.key,
        ).map(({ ref, records }) => {
          const state = codec.empty();
          for (const e of records) state.put(e);
          return { ref, state };
        }),
    };
  }

  async set(
    scope: Scope,
    key: string,
    value: string,
    options: WorkingSetOptions = {},
  ): Promise<WorkingEntry> {
    const s = parseScope(scope);
    const set = newWorkingSet(s, key, value, options, this.#clock.now(), this.#limits.defaultTtlMs);
    const namespace = namespaceOf(key);
    return this.#backend.write(refFor(s, key), this.#codec, (state) => {
      const current = state.get(key);
      const entry = versionedWorkingEntry(set, current && this.#isLive(current) ? current : undefined);
      const inNamespace = [...state.records.values()].filter(
        (e) => e.key !== key && this.#isLive(e) && namespaceOf(e.key) === namespace,
      );
      const evict = namespaceEvictions(namespace, inNamespace.length, this.#limits);
      this.#sweepPartition(state);
      // Oldest first (insertion order; an overwrite moves the key to the end).
      for (const old of inNamespace.slice(0, evict)) state.delete(old.key);
      state.put(entry, { moveToEnd: true });
      return entry;
    });
  }

  async get(scope: Scope, key: string): Promise<WorkingEntry | null> {
    const s = parseScope(scope);
    parseOrThrow(WorkingKeySchema, key, 'working-memory key');
    const entry = (await this.#backend.read(refFor(s, key), this.#codec)).get(key);
    return entry && this.#isLive(entry) ? entry : null;
  }

  async list(scope: Scope, prefix?: string): Promise<WorkingEntryInfo[]> {
    const s = parseScope(scope);
    if (prefix !== undefined) parseOrThrow(WorkingPrefixSchema, prefix, 'working-memory prefix');
    const entries = await this.#liveEntries(s, prefix);
    return entries.map(workingEntryInfo);
  }

  async search(scope: Scope, query: WorkingQuery): Promise<WorkingHit[]> {
    const s = parseScope(scope);
    const q = parseOrThrow(WorkingQuerySchema, query, 'working-memory query');
    const keep = (e: WorkingEntry) => this.#isLive(e) && workingQueryMatches(e, q);
    const hits: WorkingHit[] = [];
    for (const ref of await this.#partitions(s, q.prefix)) {
      const state = await this.#backend.read(ref, this.#codec);
      if (!q.query?.trim()) {
        for (const entry of state.records.values()) if (keep(entry)) hits.push({ entry, score: 0 });
        continue;
      }
      for (const hit of state.index().search(q.query, { filter: (key) => keep(state.get(key)!) })) {
        hits.push({ entry: state.get(hit.id)!, score: hit.score });
      }
    }
    if (q.query?.trim()) hits.sort((a, b) => b.score - a.score);
    else hits.sort((a, b) => b.entry.storedAt.localeCompare(a.entry.storedAt));
    return hits.slice(0, q.limit);
  }

  async delete(scope: Scope, key: string, options?: WriteOptions): Promise<boolean> {
    const s = parseScope(scope);
    parseOrThrow(WorkingKeySchema, key, 'working-memory key');
    const { expectedVersion } = parseWriteOptions(options);
    return this.#backend.write(refFor(s, key), this.#codec, (state) => {
      const current = state.get(key);
      const live = current !== undefined && this.#isLive(current);
      checkWorkingVersion(key, live ? current.version : 0, expectedVersion);
      state.delete(key);
      return live;
    });
  }

  async sweep(): Promise<number> {
    let removed = 0;
    for (const ref of await this.#backend.list('working')) {
      const state = await this.#backend.read(ref, this.#codec);
      if ([...state.records.values()].every((e) => this.#isLive(e))) continue;
      removed += await this.#backend.write(ref, this.#codec, (fresh) => this.#sweepPartition(fresh));
    }
    return removed;
  }

  snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<WorkingEntry>> {
    return snapshotPartitions(this.#backend, this.#mapping, selector, this.#clock);
  }

  eraseUser(userId: string): Promise<string[]> {
    return erasePartitions(this.#backend, this.#mapping, userId, (e) => e.key);
  }

  restore(snapshot: unknown, options?: RestoreOptions): Promise<RestoreReport> {
    return restorePartitions(this.#backend, this.#mapping, snapshot, options);
  }

  #isLive(entry: WorkingEntry): boolean {
    return isWorkingEntryLive(entry, this.#clock.now());
  }

  #sweepPartition(state: WorkingPartition): number {
    const expired = [...state.records.values()].filter((e) => !this.#isLive(e));
    for (const e of expired) state.delete(e.key);
    return expired.length;
  }

  async #partitions(scope: Scope, prefix: string | undefined): Promise<PartitionRef[]> {
    if (prefix) return [refFor(scope, prefix)];
    const refs = await this.#backend.list('working', scope.userId);
    return refs.filter((ref) => ref.agentId === scope.agentId);
  }

  async #liveEntries(scope: Scope, prefix: string | undefined): Promise<WorkingEntry[]> {
    const out: WorkingEntry[] = [];
    for (const ref of await this.#partitions(scope, prefix)) {
      const state = await this.#backend.read(ref, this.#codec);
      for (const entry of state.records.values()) {
        if (this.#isLive(entry) && (!prefix || keyHasPrefix(entry.key, prefix))) out.push(entry);
      }
    }
    return out.sort((a, b) => a.storedAt.localeCompare(b.storedAt));
  }
}
