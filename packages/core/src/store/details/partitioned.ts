import { type Clock, isoAt, systemClock } from '../../foundation/clock.js';
import { IdSchema } from '../../foundation/ids.js';
import { parseScope, type Scope, type SnapshotSelector } from '../../foundation/scope.js';
import { parseOrThrow } from '../../foundation/validation.js';
import { defaultTokenizer, type Tokenizer } from '../../tokens/tokenizer.js';
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
  type DetailHit,
  type DetailInput,
  type DetailListOptions,
  DetailListOptionsSchema,
  type DetailQuery,
  DetailQuerySchema,
  type DetailRecord,
  DetailRecordSchema,
} from './record.js';
import {
  detailExistsError,
  detailIndexEntries,
  listDetails,
  newDetail,
  searchDetails,
  visibleDetail,
} from './rules.js';
import type { DetailStore } from './store.js';

const detailCodec = recordPartitionCodec<DetailRecord>('details', DetailRecordSchema, {
  idOf: (d) => d.id,
  indexEntries: detailIndexEntries,
});

/** Details are partitioned by user only: a MemoryRef stays readable from any of the user's threads. */
function refFor(userId: string): PartitionRef {
  return { kind: 'details', userId };
}

const detailMapping: SnapshotMapping<DetailRecord, RecordPartition<DetailRecord>> = {
  kind: 'details',
  recordSchema: DetailRecordSchema,
  codec: detailCodec,
  recordsOf: (state) => [...state.records.values()],
  userIdOf: (d) => d.userId,
  toPartitions: (records) =>
    groupByPartition(
      records,
      (d) => refFor(d.userId),
      (d) => d.id,
    ).map(({ ref, records: rs }) => {
      const state = detailCodec.empty();
      for (const d of rs) state.put(d);
      return { ref, state };
    }),
};

/** DetailStore over any PartitionBackend. */
export class PartitionedDetailStore implements DetailStore {
  readonly #backend: PartitionBackend;
  readonly #clock: Clock;
  readonly #tokenizer: Tokenizer;

  constructor(options: { backend: PartitionBackend; clock?: Clock; tokenizer?: Tokenizer }) {
    this.#backend = options.backend;
    this.#clock = options.clock ?? systemClock;
    this.#tokenizer = options.tokenizer ?? defaultTokenizer;
  }

  async create(scope: Scope, input: DetailInput): Promise<DetailRecord> {
    const s = parseScope(scope);
    const record = newDetail(s, input, this.#tokenizer, isoAt(this.#clock));
    return this.#backend.write(refFor(s.userId), detailCodec, (state) => {
      if (state.get(record.id)) throw detailExistsError(record.id);
      state.put(record);
      return record;
    });
  }

  async get(
    scope: Scope,
    id: string,
    options: { includeInactive?: boolean } = {},
  ): Promise<DetailRecord | null> {
    const s = parseScope(scope);
    parseOrThrow(IdSchema, id, 'detail id');
    return visibleDetail((await this.#backend.read(refFor(s.userId), detailCodec)).get(id), options);
  }

  async list(scope: Scope, options: DetailListOptions = {}): Promise<DetailRecord[]> {
    const s = parseScope(scope);
    const f = parseOrThrow(DetailListOptionsSchema, options, 'detail list options');
    const state = await this.#backend.read(refFor(s.userId), detailCodec);
    return listDetails(state.records.values(), f);
  }

  async search(scope: Scope, query: DetailQuery): Promise<DetailHit[]> {
    const s = parseScope(scope);
    const q = parseOrThrow(DetailQuerySchema, query, 'detail query');
    return searchDetails(await this.#backend.read(refFor(s.userId), detailCodec), q);
  }

  async deactivate(scope: Scope, id: string): Promise<boolean> {
    const s = parseScope(scope);
    parseOrThrow(IdSchema, id, 'detail id');
    return this.#backend.write(refFor(s.userId), detailCodec, (state) => {
      const record = state.get(id);
      if (!record?.active) return false;
      state.put({ ...record, active: false });
      return true;
    });
  }

  async delete(scope: Scope, id: string): Promise<boolean> {
    const s = parseScope(scope);
    parseOrThrow(IdSchema, id, 'detail id');
    return this.#backend.write(refFor(s.userId), detailCodec, (state) => state.delete(id) !== undefined);
  }

  snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<DetailRecord>> {
    return snapshotPartitions(this.#backend, detailMapping, selector, this.#clock);
  }

  eraseUser(userId: string): Promise<string[]> {
    return erasePartitions(this.#backend, detailMapping, userId, (d) => d.id);
  }

  restore(snapshot: unknown, options?: RestoreOptions): Promise<RestoreReport> {
    return restorePartitions(this.#backend, detailMapping, snapshot, options);
  }
}
