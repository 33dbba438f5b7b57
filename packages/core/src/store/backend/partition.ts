import type { StoreKind } from '../kinds.js';
/**
 * The storage seam under Kioku's in-memory and file stores. Each store kind keeps its records in
 * partitions — one per user (and agent, and sometimes thread or namespace) — and the backend only has to
 * load, save and list partitions atomically. All record logic (validation, caps, TTL, search) lives once,
 * in the store classes, so every backend behaves the same.
 */

/** Names one partition. `name` is a sub-partition (a thread, a session, a working-memory root segment). */
export interface PartitionRef {
  readonly kind: StoreKind;
  readonly userId: string;
  readonly agentId?: string | undefined;
  readonly name?: string | undefined;
}

/** How a store kind turns its in-memory partition state into JSON and back. */
export interface PartitionCodec<S> {
  /** A new, empty partition. */
  empty(): S;
  /** Build state from persisted JSON. Throws (any error) when the data is invalid. */
  decode(data: unknown): S;
  /** Persistable JSON for the state. */
  encode(state: S): unknown;
  /** True when the partition holds nothing and may be deleted rather than saved. */
  isEmpty(state: S): boolean;
  /**
   * The partition as keyed records, in order, for backends that store each record on its own (see
   * `RecordBackend`). Without it such a backend stores the whole partition as one record. Each record
   * must stay under the backend's record limit (`DEFAULT_RECORD_LIMIT_BYTES`).
   */
  toRecords?(state: S): KeyedRecord[];
  /** State from the records `toRecords` gave, in the same order. Throws when they are invalid. */
  fromRecords?(records: readonly KeyedRecord[]): S;
  /**
   * True when `fromRecords` orders the records itself (by their keys or values), so a record-level
   * backend may keep them in any order and a write stores only new, changed and deleted records.
   */
  readonly keyOrdered?: boolean;
  /**
   * Optional, with `toRecords`: start noting which records the state's changes put and delete. A
   * record-level backend calls it before a write's change and `tracked` after, and writes those records
   * alone instead of comparing every record of the partition (O(changed) instead of O(partition)).
   */
  track?(state: S): void;
  /** Optional, with `toRecords`: one record's value as the state holds it (validated), from its stored JSON value. Throws when invalid. */
  decodeRecord?(value: unknown): unknown;
  /** What changed since `track`, in the order `toRecords` would give the records; stops noting. */
  tracked?(state: S): TrackedRecords;
}

/** The records a change put and deleted; `append` ones are new or moved after every other record. */
export interface TrackedRecords {
  readonly put: ReadonlyArray<KeyedRecord & { readonly append: boolean }>;
  readonly delete: readonly string[];
}

/** One record of a partition, as a record-level backend stores it: its key and its JSON value. */
export interface KeyedRecord {
  readonly key: string;
  readonly value: unknown;
}

export interface PartitionBackend {
  /**
   * The current state of a partition (empty when absent). The returned object is shared: callers
   * must treat it as read-only and must not keep it across an `await`.
   */
  read<S>(ref: PartitionRef, codec: PartitionCodec<S>): Promise<S>;
  /**
   * Exclusive read-modify-write. `mutate` runs synchronously on the freshest state, changes it in place
   * and returns a result. It must validate before it changes anything: if it throws, nothing is saved.
   * Writers of the same partition are serialized (across processes, where the backend is shared).
   */
  write<S, R>(ref: PartitionRef, codec: PartitionCodec<S>, mutate: (state: S) => R): Promise<R>;
  /**
   * Optional: adds `value` as the record `key` at the end of the partition without reading the partition
   * first, when that saves work. True when added, false when the partition holds `key` already (nothing
   * written), undefined when it did nothing (the caller then uses `write`).
   */
  insert?<S>(
    ref: PartitionRef,
    codec: PartitionCodec<S>,
    key: string,
    value: unknown,
  ): Promise<boolean | undefined>;
  /**
   * Optional: the record `key` alone (`{ value }`, undefined when the partition does not hold it), without
   * decoding the partition, when that saves work; undefined when it did nothing (the caller then uses `read`).
   */
  readRecord?<S>(
    ref: PartitionRef,
    codec: PartitionCodec<S>,
    key: string,
  ): Promise<{ value: unknown } | undefined>;
  /**
   * Optional: a value that changes with every write of the partition, by any process, and never comes
   * back (a record backend's version). Without it, a store's revision is the decoded partition object's.
   */
  revision?(ref: PartitionRef): Promise<string>;
  /** Replace a partition wholesale (restore). */
  replace<S>(ref: PartitionRef, codec: PartitionCodec<S>, state: S): Promise<void>;
  /** Every stored partition of `kind`, optionally only one user's. */
  list(kind: StoreKind, userId?: string): Promise<PartitionRef[]>;
}

export function partitionLabel(ref: PartitionRef): string {
  return [ref.kind, ref.userId, ref.agentId ?? '-', ref.name ?? '-'].join('|');
}
