import type { Fact, Scope } from '@kioku/core';
import {
  categoryMatches,
  checkFactVersion,
  factSearchText,
  hasAllTags,
  isoAt,
  type LexicalIndexOptions,
  missingFactError,
  newestUpdatedFirst,
  newFact,
  parseOrThrow,
  parseScope,
  parseWriteOptions,
  patchFact,
} from '@kioku/core/adapter';
import {
  type CategoryCount,
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
  type FactStore,
  IdSchema,
  type RestoreOptions,
  type RestoreReport,
  type SnapshotEnvelope,
  type SnapshotSelector,
  type WriteOptions,
} from '@kioku/core/store';
import { RedisStoreBase, type RedisStoreOptions } from './base.js';
import { NO_AGENT } from './keys.js';
import {
  PartitionCache,
  type PartitionCacheOptions,
  type PartitionKeys,
  parseJson,
  partitionKeys,
  RecordPartitions,
} from './records.js';

export interface RedisSearchOptions {
  /** Search partitions kept in memory (see the README's "Search"). */
  cache?: PartitionCacheOptions;
  /** Ranking parameters for core's LexicalIndex (default: core's). */
  search?: LexicalIndexOptions;
}

export type RedisFactStoreOptions = RedisStoreOptions & RedisSearchOptions;

function matching(facts: readonly Fact[], filter: { category?: string; tags?: string[] }): Fact[] {
  return facts.filter(
    (f) =>
      (!filter.category || categoryMatches(f.category, filter.category)) && hasAllTags(f.tags, filter.tags),
  );
}

const byCreated = (a: Fact, b: Fact) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0);

/** Stored fact JSON (validated when written); facts stored before versions existed read as version 1. */
function parseFact(json: string): Fact {
  const fact = parseJson<Fact>(json, 'fact');
  fact.version ??= 1;
  return fact;
}

/**
 * Facts in one HASH per user + agent (`facts:{user}:agent:rec`), in insertion order (`…:ord`). Search,
 * list and categories read the partition through a per-process cache kept current with the partition's
 * change log, and rank with core's LexicalIndex.
 */
export class RedisFactStore extends RedisStoreBase implements FactStore {
  readonly #records: RecordPartitions<Fact>;
  readonly #cache: PartitionCache<Fact>;

  constructor(options: RedisFactStoreOptions) {
    super(options);
    this.#records = new RecordPartitions<Fact>(this.connection, {
      name: 'fact',
      parse: parseFact,
      indexEntries: (fact) => [{ key: fact.id, text: factSearchText(fact) }],
      ...(options.search ? { search: options.search } : {}),
      // A stored index is only valid for the analyzer that made it: core's, unless another is given.
      persistIndex: options.search?.analyzer === undefined,
    });
    this.#cache = new PartitionCache(this.#records, (f) => f.id, options.cache);
  }

  async get(scope: Scope, id: string): Promise<Fact | null> {
    const keys = this.#keysFor(parseScope(scope));
    parseOrThrow(IdSchema, id, 'fact id');
    return this.#records.get(keys, id);
  }

  async list(scope: Scope, options: FactListOptions = {}): Promise<Fact[]> {
    const keys = this.#keysFor(parseScope(scope));
    const opts = parseOrThrow(FactListOptionsSchema, options, 'list options');
    const partition = await this.#cache.current(keys);
    partition.storeLater();
    const facts = matching(partition.ordered(), opts);
    if (opts.order === 'updated') {
      // Insertion order reversed is nearly `updated` order (most facts are never updated).
      facts.reverse().sort(newestUpdatedFirst);
    } else {
      facts.sort(byCreated);
      if (opts.order === 'newest') facts.reverse();
    }
    return facts.slice(opts.offset, opts.limit === undefined ? undefined : opts.offset + opts.limit);
  }

  /** The partition's epoch and change counter, bumped by every write script (see `RecordPartitions.revision`). */
  async revision(scope: Scope): Promise<string> {
    return this.#records.revision(this.#keysFor(parseScope(scope)));
  }

  async count(scope: Scope, filter: FactFilter = {}): Promise<number> {
    const keys = this.#keysFor(parseScope(scope));
    const f = parseOrThrow(FactFilterSchema, filter, 'count filter');
    if (!f.category && !f.tags?.length) return this.#records.size(keys);
    const partition = await this.#cache.current(keys);
    partition.storeLater();
    return matching(partition.ordered(), f).length;
  }

  async create(scope: Scope, input: FactInput): Promise<Fact> {
    const s = parseScope(scope);
    // core's newFact puts the validated input and scope together without parsing them again: that second
    // parse (≈ 11 µs, mostly its two ISO date checks) was about half of what this method added to the raw
    // EVALSHA (bench:store).
    const fact = newFact(s, parseOrThrow(FactInputSchema, input, 'fact'), isoAt(this.clock));
    await this.#records.insert(this.#keysFor(s), fact.id, fact, 'fact');
    return fact;
  }

  async update(scope: Scope, id: string, patch: FactPatch, options?: WriteOptions): Promise<Fact> {
    const keys = this.#keysFor(parseScope(scope));
    parseOrThrow(IdSchema, id, 'fact id');
    const changes = parseOrThrow(FactPatchSchema, patch, 'fact update');
    const { expectedVersion } = parseWriteOptions(options);
    const updatedAt = isoAt(this.clock);
    // A stale expectedVersion throws inside the compare-and-set (nothing written); a retry after a
    // concurrent change checks it again against the fresh record.
    return this.#records.modify(
      keys,
      id,
      () => missingFactError(id),
      (current) => {
        const next = patchFact(current, changes, updatedAt, expectedVersion);
        return { next, result: next };
      },
    );
  }

  async delete(scope: Scope, id: string, options?: WriteOptions): Promise<boolean> {
    const keys = this.#keysFor(parseScope(scope));
    parseOrThrow(IdSchema, id, 'fact id');
    const { expectedVersion } = parseWriteOptions(options);
    if (expectedVersion === undefined) return this.#records.delete(keys, id);
    return this.#records.deleteIf(keys, id, (current) => checkFactVersion(current, expectedVersion));
  }

  async search(scope: Scope, query: FactQuery): Promise<FactHit[]> {
    const keys = this.#keysFor(parseScope(scope));
    const q = parseOrThrow(FactQuerySchema, query, 'fact query');
    const filtered = Boolean(q.category || q.tags?.length);
    // A ranked search without filters needs only the index (and then its hits' records): a new process
    // need not load the partition's records for it.
    const partition = await this.#cache.current(keys, { whole: filtered || !q.query?.trim() });
    const keep = (fact: Fact) =>
      (!q.category || categoryMatches(fact.category, q.category)) && hasAllTags(fact.tags, q.tags);
    if (!q.query?.trim()) {
      partition.storeLater();
      return partition
        .ordered()
        .filter(keep)
        .sort((a, b) => (b.updatedAt < a.updatedAt ? -1 : b.updatedAt > a.updatedAt ? 1 : 0))
        .slice(0, q.limit)
        .map((fact) => ({ fact, score: 0 }));
    }
    const filter = filtered ? (id: string) => keep(partition.get(id)!) : undefined;
    const hits = partition.index().search(q.query, { limit: q.limit, filter });
    const facts = await this.#cache.recordsOf(
      keys,
      partition,
      hits.map((hit) => hit.id),
    );
    partition.storeLater();
    // A hit whose fact was deleted after the copy was brought up to date is left out.
    return hits.flatMap((hit, i) => (facts[i] ? [{ fact: facts[i], score: hit.score }] : []));
  }

  async categories(scope: Scope): Promise<CategoryCount[]> {
    const keys = this.#keysFor(parseScope(scope));
    const partition = await this.#cache.current(keys);
    partition.storeLater();
    const counts = new Map<string, number>();
    for (const fact of partition.ordered()) counts.set(fact.category, (counts.get(fact.category) ?? 0) + 1);
    return [...counts]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([category, count]) => ({ category, count }));
  }

  eraseUser(userId: string): Promise<string[]> {
    return this.eraseKeys('facts', userId, async () =>
      (await this.snapshot({ userId })).records.map((r) => r.id),
    );
  }

  async snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<Fact>> {
    return this.snapshotOf('facts', selector, async (userId) => {
      const records: Fact[] = [];
      for (const found of await this.partitionsOf('facts', ':rec', userId)) {
        const loaded = await this.#records.load(partitionKeys(found.key.slice(0, -':rec'.length)));
        records.push(...loaded.records.map((s) => s.record));
      }
      return records;
    });
  }

  async restore(snapshot: unknown, options: RestoreOptions = {}): Promise<RestoreReport> {
    return this.restoreFrom('facts', FactSchema, snapshot, options, {
      userIdOf: (f) => f.userId,
      partitionOf: (f) => `${f.userId}/${f.agentId ?? NO_AGENT}`,
      idOf: (f) => f.id,
      replace: (multi, facts) =>
        this.#records.queueReplace(multi, this.#keysFor(facts[0]!), facts, (f) => f.id),
    });
  }

  #keysFor(scope: Pick<Scope, 'userId' | 'agentId'>): PartitionKeys {
    return partitionKeys(this.keys.base('facts', scope));
  }
}
