import { type DetailRecord, defaultTokenizer, type Scope, type Tokenizer } from '@kioku/core';
import {
  detailIndexEntries,
  isoAt,
  listDetails,
  newDetail,
  parseOrThrow,
  parseScope,
  searchDetails,
  visibleDetail,
} from '@kioku/core/adapter';
import {
  type DetailHit,
  type DetailInput,
  type DetailListOptions,
  DetailListOptionsSchema,
  type DetailQuery,
  DetailQuerySchema,
  DetailRecordSchema,
  type DetailStore,
  IdSchema,
  type RestoreOptions,
  type RestoreReport,
  type SnapshotEnvelope,
  type SnapshotSelector,
} from '@kioku/core/store';
import { RedisStoreBase, type RedisStoreOptions } from './base.js';
import type { RedisSearchOptions } from './facts.js';
import { PartitionCache, type PartitionKeys, partitionKeys, RecordPartitions } from './records.js';

export type RedisDetailStoreOptions = RedisStoreOptions & RedisSearchOptions & { tokenizer?: Tokenizer };

/**
 * Details (full content behind MemoryRefs) in one HASH per user (`details:{user}:rec`): a ref stays
 * readable from any of the user's agents and threads, which are recorded on each record and filter
 * list and search.
 */
export class RedisDetailStore extends RedisStoreBase implements DetailStore {
  readonly #records: RecordPartitions<DetailRecord>;
  readonly #cache: PartitionCache<DetailRecord>;
  readonly #tokenizer: Tokenizer;

  constructor(options: RedisDetailStoreOptions) {
    super(options);
    this.#tokenizer = options.tokenizer ?? defaultTokenizer;
    this.#records = new RecordPartitions<DetailRecord>(this.connection, {
      name: 'detail',
      indexEntries: detailIndexEntries,
      ...(options.search ? { search: options.search } : {}),
    });
    this.#cache = new PartitionCache(this.#records, (d) => d.id, options.cache);
  }

  async create(scope: Scope, input: DetailInput): Promise<DetailRecord> {
    const s = parseScope(scope);
    const record = newDetail(s, input, this.#tokenizer, isoAt(this.clock));
    await this.#records.insert(this.#keysFor(s.userId), record.id, record, 'detail');
    return record;
  }

  async get(
    scope: Scope,
    id: string,
    options: { includeInactive?: boolean } = {},
  ): Promise<DetailRecord | null> {
    const s = parseScope(scope);
    parseOrThrow(IdSchema, id, 'detail id');
    return visibleDetail(await this.#records.get(this.#keysFor(s.userId), id), options);
  }

  async list(scope: Scope, options: DetailListOptions = {}): Promise<DetailRecord[]> {
    const s = parseScope(scope);
    const f = parseOrThrow(DetailListOptionsSchema, options, 'detail list options');
    const partition = await this.#cache.current(this.#keysFor(s.userId));
    return listDetails(partition.ordered(), f);
  }

  async search(scope: Scope, query: DetailQuery): Promise<DetailHit[]> {
    const s = parseScope(scope);
    const q = parseOrThrow(DetailQuerySchema, query, 'detail query');
    return searchDetails(await this.#cache.current(this.#keysFor(s.userId)), q);
  }

  async deactivate(scope: Scope, id: string): Promise<boolean> {
    const s = parseScope(scope);
    parseOrThrow(IdSchema, id, 'detail id');
    try {
      return await this.#records.modify(this.#keysFor(s.userId), id, 'missing', (record) =>
        record.active ? { next: { ...record, active: false }, result: true } : { result: false },
      );
    } catch (error) {
      if ((error as { code?: unknown }).code === 'NOT_FOUND') return false;
      throw error;
    }
  }

  async delete(scope: Scope, id: string): Promise<boolean> {
    const s = parseScope(scope);
    parseOrThrow(IdSchema, id, 'detail id');
    return this.#records.delete(this.#keysFor(s.userId), id);
  }

  eraseUser(userId: string): Promise<string[]> {
    return this.eraseKeys('details', userId, async () =>
      (await this.snapshot({ userId })).records.map((r) => r.id),
    );
  }

  async snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<DetailRecord>> {
    return this.snapshotOf('details', selector, async (userId) => {
      const records: DetailRecord[] = [];
      for (const found of await this.partitionsOf('details', ':rec', userId)) {
        const loaded = await this.#records.load(partitionKeys(found.key.slice(0, -':rec'.length)));
        records.push(...loaded.records.map((s) => s.record));
      }
      return records;
    });
  }

  async restore(snapshot: unknown, options: RestoreOptions = {}): Promise<RestoreReport> {
    return this.restoreFrom('details', DetailRecordSchema, snapshot, options, {
      userIdOf: (d) => d.userId,
      partitionOf: (d) => d.userId,
      idOf: (d) => d.id,
      replace: (multi, records) =>
        this.#records.queueReplace(multi, this.#keysFor(records[0]!.userId), records, (d) => d.id),
    });
  }

  #keysFor(userId: string): PartitionKeys {
    return partitionKeys(this.keys.base('details', { userId }));
  }
}
