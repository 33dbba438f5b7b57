import { type Clock, isoAt, systemClock } from '../../foundation/clock.js';
import { ConflictError } from '../../foundation/errors.js';
import { IdSchema } from '../../foundation/ids.js';
import { categoryMatches, hasAllTags } from '../../foundation/record-fields.js';
import { parseScope, type Scope, type SnapshotSelector } from '../../foundation/scope.js';
import { parseOrThrow } from '../../foundation/validation.js';
import { parseWriteOptions, type WriteOptions } from '../../foundation/version.js';
import type { PartitionBackend, PartitionRef } from '../backend/partition.js';
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
  type CategoryCount,
  type Fact,
  type FactFilter,
  FactFilterSchema,
  type FactHit,
  type FactInput,
  FactInputSchema,
  type FactListOptions,
  FactListOptionsSchema,
  type FactPatch,
  FactPatchSchema,
  type FactQuery,
  FactQuerySchema,
  FactSchema,
  factSearchText,
  newestUpdatedFirst,
} from './record.js';
import { checkFactVersion, missingFactError, newFact, patchFact } from './rules.js';
import { factOfShape } from './shape.js';
import type { FactStore } from './store.js';

export interface PartitionedStoreOptions {
  backend: PartitionBackend;
  clock?: Clock;
}

const factCodec = recordPartitionCodec<Fact>('facts', FactSchema, {
  idOf: (fact) => fact.id,
  indexEntries: (fact) => [{ key: fact.id, text: factSearchText(fact) }],
  orders: { updated: newestUpdatedFirst },
  ofShape: factOfShape,
});

function refFor(scope: Scope): PartitionRef {
  return { kind: 'facts', userId: scope.userId, agentId: scope.agentId };
}

const factMapping: SnapshotMapping<Fact, RecordPartition<Fact>> = {
  kind: 'facts',
  recordSchema: FactSchema,
  codec: factCodec,
  recordsOf: (state) => [...state.records.values()],
  userIdOf: (fact) => fact.userId,
  toPartitions: (facts) =>
    groupByPartition(
      facts,
      (f) => refFor(f),
      (f) => f.id,
    ).map(({ ref, records }) => {
      const state = factCodec.empty();
      for (const fact of records) state.put(fact);
      return { ref, state };
    }),
};

/** The facts that pass the filter, in order; the first `max` of them (all by default). */
function matching(
  facts: Iterable<Fact>,
  filter: { category?: string; tags?: string[] },
  max = Number.POSITIVE_INFINITY,
): Fact[] {
  const out: Fact[] = [];
  if (max <= 0) return out;
  for (const f of facts) {
    if (
      (!filter.category || categoryMatches(f.category, filter.category)) &&
      hasAllTags(f.tags, filter.tags)
    ) {
      // A page needs no more than its end: the rest of a large partition is not walked.
      if (out.push(f) >= max) break;
    }
  }
  return out;
}

/** Creation order; code-unit comparison is chronological for ISO timestamps (and stable on ties). */
function byCreated(a: Fact, b: Fact): number {
  return a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0;
}

/** FactStore over any PartitionBackend: one partition per user + agent. */
export class PartitionedFactStore implements FactStore {
  readonly #backend: PartitionBackend;
  readonly #clock: Clock;

  constructor(options: PartitionedStoreOptions) {
    this.#backend = options.backend;
    this.#clock = options.clock ?? systemClock;
  }

  async get(scope: Scope, id: string): Promise<Fact | null> {
    const ref = refFor(parseScope(scope));
    parseOrThrow(IdSchema, id, 'fact id');
    // The one record when the backend reads it alone (this process has not decoded the partition).
    const one = await this.#backend.readRecord?.(ref, factCodec, id);
    if (one) return (one.value as Fact | undefined) ?? null;
    const state = await this.#backend.read(ref, factCodec);
    return state.get(id) ?? null;
  }

  async list(scope: Scope, options: FactListOptions = {}): Promise<Fact[]> {
    const ref = refFor(parseScope(scope));
    const opts = parseOrThrow(FactListOptionsSchema, options, 'list options');
    const state = await this.#backend.read(ref, factCodec);
    // The fact block (mode `all`) reads pages of `updated` every turn: that order is kept sorted through writes; the
    // creation orders are sorted once per change.
    const byCreation = () => state.view('oldest', () => [...state.records.values()].sort(byCreated));
    const sorted =
      opts.order === 'updated'
        ? state.sorted('updated')
        : opts.order === 'newest'
          ? state.view('newest', () => [...byCreation()].reverse())
          : byCreation();
    const end = opts.limit === undefined ? undefined : opts.offset + opts.limit;
    if (opts.category || opts.tags?.length) return matching(sorted, opts, end).slice(opts.offset, end);
    return sorted.slice(opts.offset, end);
  }

  async revision(scope: Scope): Promise<string> {
    const ref = refFor(parseScope(scope));
    if (this.#backend.revision) return this.#backend.revision(ref);
    const state = await this.#backend.read(ref, factCodec);
    return state.revision;
  }

  async count(scope: Scope, filter: FactFilter = {}): Promise<number> {
    const ref = refFor(parseScope(scope));
    const f = parseOrThrow(FactFilterSchema, filter, 'count filter');
    const state = await this.#backend.read(ref, factCodec);
    if (!f.category && !f.tags?.length) return state.records.size;
    return matching(state.records.values(), f).length;
  }

  async create(scope: Scope, input: FactInput): Promise<Fact> {
    const parsedScope = parseScope(scope);
    const fact = newFact(parsedScope, parseOrThrow(FactInputSchema, input, 'fact'), isoAt(this.#clock));
    const ref = refFor(parsedScope);
    // Added without reading the partition when the backend can (a new fact needs only its id to be free).
    const inserted = await this.#backend.insert?.(ref, factCodec, fact.id, fact);
    if (inserted === false) throw new ConflictError(`A fact with id "${fact.id}" already exists.`);
    if (inserted === true) return fact; // the caller's own: no decoded partition holds it
    return this.#backend.write(ref, factCodec, (state) => {
      if (state.get(fact.id)) throw new ConflictError(`A fact with id "${fact.id}" already exists.`);
      state.put(fact);
      return fact;
    });
  }

  async update(scope: Scope, id: string, patch: FactPatch, options?: WriteOptions): Promise<Fact> {
    const ref = refFor(parseScope(scope));
    parseOrThrow(IdSchema, id, 'fact id');
    const changes = parseOrThrow(FactPatchSchema, patch, 'fact update');
    const { expectedVersion } = parseWriteOptions(options);
    const updatedAt = isoAt(this.#clock);
    return this.#backend.write(ref, factCodec, (state) => {
      const current = state.get(id);
      if (!current) throw missingFactError(id);
      const next = patchFact(current, changes, updatedAt, expectedVersion);
      state.put(next);
      return next;
    });
  }

  async delete(scope: Scope, id: string, options?: WriteOptions): Promise<boolean> {
    const ref = refFor(parseScope(scope));
    parseOrThrow(IdSchema, id, 'fact id');
    const { expectedVersion } = parseWriteOptions(options);
    return this.#backend.write(ref, factCodec, (state) => {
      const current = state.get(id);
      if (!current) return false;
      checkFactVersion(current, expectedVersion);
      return state.delete(id) !== undefined;
    });
  }

  async search(scope: Scope, query: FactQuery): Promise<FactHit[]> {
    const ref = refFor(parseScope(scope));
    const q = parseOrThrow(FactQuerySchema, query, 'fact query');
    const state = await this.#backend.read(ref, factCodec);
    const keep = (fact: Fact) =>
      (!q.category || categoryMatches(fact.category, q.category)) && hasAllTags(fact.tags, q.tags);
    if (!q.query?.trim()) {
      return [...state.records.values()]
        .filter(keep)
        .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt))
        .slice(0, q.limit)
        .map((fact) => ({ fact, score: 0 }));
    }
    const filter = q.category || q.tags?.length ? (id: string) => keep(state.get(id)!) : undefined;
    return state
      .index()
      .search(q.query, { limit: q.limit, filter })
      .map((hit) => ({ fact: state.get(hit.id)!, score: hit.score }));
  }

  async categories(scope: Scope): Promise<CategoryCount[]> {
    const ref = refFor(parseScope(scope));
    const state = await this.#backend.read(ref, factCodec);
    const counts = new Map<string, number>();
    for (const fact of state.records.values())
      counts.set(fact.category, (counts.get(fact.category) ?? 0) + 1);
    return [...counts]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([category, count]) => ({ category, count }));
  }

  snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<Fact>> {
    return snapshotPartitions(this.#backend, factMapping, selector, this.#clock);
  }

  eraseUser(userId: string): Promise<string[]> {
    return erasePartitions(this.#backend, factMapping, userId, (f) => f.id);
  }

  restore(snapshot: unknown, options?: RestoreOptions): Promise<RestoreReport> {
    return restorePartitions(this.#backend, factMapping, snapshot, options);
  }
}
