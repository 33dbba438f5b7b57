import { StorageError } from '../../foundation/errors.js';
import type { StoreKind } from '../kinds.js';
import type { KeyedRecord, PartitionBackend, PartitionCodec, PartitionRef } from './partition.js';
import { partitionLabel } from './partition.js';

/** A record as a record-level backend keeps it: its key and its value as JSON text. */
export interface StoredRecord {
  readonly key: string;
  readonly json: string;
}

/** One atomic change to a partition. */
export interface RecordChanges {
  /** New or changed records, in partition order. `append` ones go after every other record, in this order. */
  readonly put: ReadonlyArray<StoredRecord & { readonly append: boolean }>;
  readonly delete: readonly string[];
}

/**
 * The record-level seam: the tier between implementing every store contract and handing Kioku whole
 * partitions. A backend keeps each record of a partition on its own (a row, a document, a hash field) and
 * a version per partition; Kioku's store classes keep every rule (validation, caps, expiry, search). A
 * MongoDB or DynamoDB adapter implements these four methods and passes the conformance suite.
 */
export interface RecordBackend {
  /** Every record of the partition in order (appended records last, in the order they were appended), and the partition's version (0 when it has never been written). */
  scan(ref: PartitionRef): Promise<{ version: number; records: StoredRecord[] }>;
  /**
   * Applies the changes at once if the partition is still at `expectedVersion` and moves it to the next
   * version; returns false (and writes nothing) when another writer got there first. A put of an existing
   * key without `append` keeps the record's place.
   */
  apply(ref: PartitionRef, expectedVersion: number, changes: RecordChanges): Promise<boolean>;
  /** Replaces every record of the partition (restore); a new version. No records: the partition goes. */
  replace(ref: PartitionRef, records: readonly StoredRecord[]): Promise<void>;
  /** Every partition of `kind` that holds records, optionally only one user's. */
  listPartitions(kind: StoreKind, userId?: string): Promise<PartitionRef[]>;
}

/** Attempts of an optimistic write before giving up under contention. */
const MAX_ATTEMPTS = 50;

const WHOLE = '';

/**
 * The partition seam (what every `Partitioned*Store` runs on) over a record-level backend: a read scans
 * the partition's records; a write runs the store's change on them, then applies only what changed, with
 * a check that the partition did not move since the scan (else it reads again and retries).
 */
export class RecordBackedPartitions implements PartitionBackend {
  readonly #records: RecordBackend;
  /** Writes of one partition from this process run one after another (the versions settle the rest). */
  readonly #queues = new Map<string, Promise<unknown>>();

  constructor(records: RecordBackend) {
    this.#records = records;
  }

  async read<S>(ref: PartitionRef, codec: PartitionCodec<S>): Promise<S> {
    const { records } = await this.#records.scan(ref);
    return stateOf(codec, records);
  }

  write<S, R>(ref: PartitionRef, codec: PartitionCodec<S>, mutate: (state: S) => R): Promise<R> {
    const label = partitionLabel(ref);
    const previous = this.#queues.get(label) ?? Promise.resolve();
    const run = previous.then(
      () => this.#write(ref, codec, mutate),
      () => this.#write(ref, codec, mutate),
    );
    this.#queues.set(label, run);
    const forget = () => {
      if (this.#queues.get(label) === run) this.#queues.delete(label);
    };
    run.then(forget, forget);
    return run;
  }

  async #write<S, R>(ref: PartitionRef, codec: PartitionCodec<S>, mutate: (state: S) => R): Promise<R> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      if (attempt > 0) await backoff(attempt);
      const { version, records } = await this.#records.scan(ref);
      const state = stateOf(codec, records);
      const result = mutate(state);
      const changes = diff(records, recordsOf(codec, state));
      if (changes.put.length === 0 && changes.delete.length === 0) return result;
      if (await this.#records.apply(ref, version, changes)) return result;
    }
    throw new StorageError(
      `Gave up writing partition ${partitionLabel(ref)} after ${MAX_ATTEMPTS} concurrent changes.`,
    );
  }

  async replace<S>(ref: PartitionRef, codec: PartitionCodec<S>, state: S): Promise<void> {
    await this.#records.replace(ref, recordsOf(codec, state));
  }

  list(kind: StoreKind, userId?: string): Promise<PartitionRef[]> {
    return this.#records.listPartitions(kind, userId);
  }
}

/** A short random wait before retrying against another process's write (grows with the attempts). */
function backoff(attempt: number): Promise<void> {
  const ms = Math.random() * Math.min(50, 2 ** attempt);
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function stateOf<S>(codec: PartitionCodec<S>, records: readonly StoredRecord[]): S {
  if (records.length === 0) return codec.empty();
  const keyed: KeyedRecord[] = records.map((r) => ({ key: r.key, value: JSON.parse(r.json) }));
  if (codec.fromRecords) return codec.fromRecords(keyed);
  return codec.decode(keyed[0]!.value);
}

function recordsOf<S>(codec: PartitionCodec<S>, state: S): StoredRecord[] {
  if (codec.isEmpty(state)) return [];
  const keyed = codec.toRecords ? codec.toRecords(state) : [{ key: WHOLE, value: codec.encode(state) }];
  return keyed.map((r) => ({ key: r.key, json: JSON.stringify(r.value) }));
}

/**
 * What turns `before` into `after`: deleted keys, changed records in place, and — from the first record
 * out of its old order on (a record moved to the end, or a new one) — the rest appended in order.
 */
export function diff(before: readonly StoredRecord[], after: readonly StoredRecord[]): RecordChanges {
  const afterKeys = new Set(after.map((r) => r.key));
  const old = new Map(before.map((r) => [r.key, r.json]));
  const kept = before.filter((r) => afterKeys.has(r.key)).map((r) => r.key);
  let inPlace = 0;
  while (inPlace < after.length && inPlace < kept.length && after[inPlace]!.key === kept[inPlace]) inPlace++;
  const put: Array<StoredRecord & { append: boolean }> = [];
  after.forEach((record, i) => {
    if (i >= inPlace) put.push({ ...record, append: true });
    else if (old.get(record.key) !== record.json) put.push({ ...record, append: false });
  });
  return { put, delete: before.filter((r) => !afterKeys.has(r.key)).map((r) => r.key) };
}

interface MemoryPartition {
  ref: PartitionRef;
  version: number;
  /** In partition order. */
  records: Map<string, string>;
}

/**
 * A record-level backend in process memory: the reference for `RecordBackend`, and the one the
 * conformance suite runs every store kind over to prove the seam.
 */
export class InMemoryRecordBackend implements RecordBackend {
  readonly #partitions = new Map<string, MemoryPartition>();

  async scan(ref: PartitionRef): Promise<{ version: number; records: StoredRecord[] }> {
    const partition = this.#partitions.get(partitionLabel(ref));
    if (!partition) return { version: 0, records: [] };
    return {
      version: partition.version,
      records: [...partition.records].map(([key, json]) => ({ key, json })),
    };
  }

  async apply(ref: PartitionRef, expectedVersion: number, changes: RecordChanges): Promise<boolean> {
    const label = partitionLabel(ref);
    const partition = this.#partitions.get(label) ?? { ref: { ...ref }, version: 0, records: new Map() };
    if (partition.version !== expectedVersion) return false;
    for (const key of changes.delete) partition.records.delete(key);
    for (const record of changes.put) {
      if (record.append) partition.records.delete(record.key);
      partition.records.set(record.key, record.json);
    }
    partition.version++;
    if (partition.records.size === 0) this.#partitions.delete(label);
    else this.#partitions.set(label, partition);
    return true;
  }

  async replace(ref: PartitionRef, records: readonly StoredRecord[]): Promise<void> {
    const label = partitionLabel(ref);
    const version = (this.#partitions.get(label)?.version ?? 0) + 1;
    if (records.length === 0) this.#partitions.delete(label);
    else {
      this.#partitions.set(label, {
        ref: { ...ref },
        version,
        records: new Map(records.map((r) => [r.key, r.json])),
      });
    }
  }

  async listPartitions(kind: StoreKind, userId?: string): Promise<PartitionRef[]> {
    return [...this.#partitions.values()]
      .filter((p) => p.ref.kind === kind && (userId === undefined || p.ref.userId === userId))
      .map((p) => p.ref);
  }
}
