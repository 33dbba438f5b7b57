import { CorruptDataError, KiokuError, StorageError } from '../../foundation/errors.js';
import type { StoreKind } from '../kinds.js';
import type {
  KeyedRecord,
  PartitionBackend,
  PartitionCodec,
  PartitionRef,
  TrackedRecords,
} from './partition.js';
import { partitionLabel } from './partition.js';

/** A record as a record-level backend keeps it: its key and its value as JSON text. */
export interface StoredRecord {
  readonly key: string;
  readonly json: string;
}

/** One atomic change to a partition. */
export interface RecordChanges {
  /**
   * New or changed records, in partition order. `append` ones go after every other record, in this order.
   * `value` is the value the JSON was made from, when the writer has it at hand (a backend that indexes
   * values, e.g. for a search push-down, need not parse the JSON again); never changed by the backend.
   */
  readonly put: ReadonlyArray<StoredRecord & { readonly append: boolean; readonly value?: unknown }>;
  readonly delete: readonly string[];
}

/**
 * The largest record (its JSON text, UTF-8) Kioku writes by default: DynamoDB's 400 KB item limit, the
 * smallest of the common document stores (MongoDB 16 MB, Firestore 1 MiB, Cosmos DB 2 MB). Kioku keeps
 * records far below it — a fact, a transcript entry, a k-v entry and a document chunk are each one
 * record; a document's text is cut into parts of at most 50,000 characters — so only an unusually large
 * single value (a transcript message of hundreds of KB) reaches it, and that write fails with
 * `RecordTooLargeError` before anything is stored.
 */
export const DEFAULT_RECORD_LIMIT_BYTES = 400 * 1024;

/** A record would exceed the backend's item size limit; nothing was written. */
export class RecordTooLargeError extends KiokuError {
  constructor(ref: PartitionRef, key: string, bytes: number, limit: number) {
    super(
      'CAPACITY',
      `A ${ref.kind} record (key "${key}") is ${bytes} bytes, over this backend's record limit of ${limit} bytes; nothing was written. Store less in one value (e.g. offload a large tool output as a detail) or raise the backend's recordLimitBytes if it allows larger items.`,
      { details: { kind: ref.kind, key, bytes, limit } },
    );
  }
}

/**
 * The record-level seam: what a storage adapter implements. A backend keeps each record of a partition
 * on its own (a row, a document, a hash field) and a version per partition; Kioku's store classes above
 * it keep every rule (validation, caps, expiry, search), snapshots, restore and erasure. Four methods are
 * required; `version` is optional and lets Kioku keep a partition decoded in memory between calls
 * (checked by version on every call) instead of scanning it each time.
 */
export interface RecordBackend {
  /** Every record of the partition in order (appended records last, in the order they were appended), and the partition's version (0 when it has never been written). */
  scan(ref: PartitionRef): Promise<{ version: number; records: StoredRecord[] }>;
  /**
   * Applies the changes at once if the partition is still at `expectedVersion` and returns its new
   * version; returns null (and writes nothing) when another writer got there first. A put of an existing
   * key without `append` keeps the record's place. A version must never come back for a partition (a
   * counter that survives the partition's deletion, or a random start for a new one), so a reader that
   * cached a partition at a version never mistakes a later state for it.
   */
  apply(ref: PartitionRef, expectedVersion: number, changes: RecordChanges): Promise<number | null>;
  /** Replaces every record of the partition (restore, erase); a new version. No records: the partition goes. */
  replace(ref: PartitionRef, records: readonly StoredRecord[]): Promise<void>;
  /** Every partition of `kind` that holds records, optionally only one user's. */
  listPartitions(kind: StoreKind, userId?: string): Promise<PartitionRef[]>;
  /**
   * Optional: adds one record after every other one with a new version, unless the partition holds its key
   * already (then false, nothing written). Lets a store add a record without reading the partition first
   * (a fact created by a process that has not read that user's facts). `value` is what `json` was made
   * from. Only for backends that keep every partition record by record (none stored whole).
   */
  insert?(ref: PartitionRef, record: StoredRecord & { readonly value?: unknown }): Promise<boolean>;
  /** Optional: one record's JSON (undefined when the partition does not hold it), cheaper than a scan. Same caveat as `insert`. */
  get?(ref: PartitionRef, key: string): Promise<string | undefined>;
  /** Optional: the partition's current version, cheaper than a scan. With it, decoded partitions are cached. */
  version?(ref: PartitionRef): Promise<number>;
  /** Optional: where the partition lives (e.g. `{ file }`), for the details of a CorruptDataError. */
  locate?(ref: PartitionRef): Record<string, unknown>;
  /** The largest record this backend stores, in bytes of JSON text (default `DEFAULT_RECORD_LIMIT_BYTES`). */
  readonly recordLimitBytes?: number;
}

/** Reads of an absent partition's revision in this process (each gets its own value). */
let absentReads = 0;

/** Attempts of an optimistic write before giving up under contention. */
const MAX_ATTEMPTS = 50;

/** Decoded partitions kept (least recently used dropped first), so a server of many users stays bounded. */
const CACHED_PARTITIONS = 1_000;

/** The key of a partition stored whole, as one record (codecs without `toRecords`, and older data). */
const WHOLE = '';

/** A record as last read or written, with the value object it came from (unchanged values skip JSON). */
interface KnownRecord {
  readonly key: string;
  readonly value: unknown;
  readonly json: string;
}

interface CachedPartition {
  version: number;
  state: unknown;
  /** The records as read or written; empty for a codec that tracks its changes (they are not compared). */
  records: KnownRecord[];
  /** Read from a partition stored whole: the next write stores it record by record. */
  whole: boolean;
}

/** True when the codec reports the records each change puts and deletes (see `PartitionCodec.track`). */
function tracks<S>(codec: PartitionCodec<S>): boolean {
  return codec.track !== undefined && codec.tracked !== undefined && codec.toRecords !== undefined;
}

/**
 * The partition seam (what every `Partitioned*Store` runs on) over a record-level backend: a read scans
 * the partition's records (or, when the backend reports versions, reuses the partition decoded at the
 * same version); a write runs the store's change on them, then applies only what changed, with a check
 * that the partition did not move since it was read (else it reads again and retries).
 */
export class RecordBackedPartitions implements PartitionBackend {
  readonly #records: RecordBackend;
  readonly #limit: number;
  /** Writes of one partition from this process run one after another (the versions settle the rest). */
  readonly #queues = new Map<string, Promise<unknown>>();
  readonly #cache = new Map<string, CachedPartition>();

  constructor(records: RecordBackend) {
    this.#records = records;
    this.#limit = records.recordLimitBytes ?? DEFAULT_RECORD_LIMIT_BYTES;
  }

  async read<S>(ref: PartitionRef, codec: PartitionCodec<S>): Promise<S> {
    return (await this.#load(ref, codec)).state as S;
  }

  write<S, R>(ref: PartitionRef, codec: PartitionCodec<S>, mutate: (state: S) => R): Promise<R> {
    return this.#queued(ref, () => this.#write(ref, codec, mutate));
  }

  /**
   * A new record added by the backend's `insert` when this process has not decoded the partition (a
   * decoded one is written as cheaply through `write`, and stays cached): no scan, no decode.
   */
  insert<S>(
    ref: PartitionRef,
    codec: PartitionCodec<S>,
    key: string,
    value: unknown,
  ): Promise<boolean | undefined> {
    const insert = this.#records.insert?.bind(this.#records);
    if (!insert || !codec.toRecords) return Promise.resolve(undefined);
    const label = partitionLabel(ref);
    return this.#queued(ref, async () => {
      if (this.#cache.has(label)) return undefined;
      return insert(ref, { key, json: this.#json(ref, key, value), value });
    });
  }

  /**
   * One record read by the backend's `get` when this process has not decoded the partition (a decoded one
   * answers from memory through `read`): no scan, no decode of the rest.
   */
  async readRecord<S>(
    ref: PartitionRef,
    codec: PartitionCodec<S>,
    key: string,
  ): Promise<{ value: unknown } | undefined> {
    const get = this.#records.get?.bind(this.#records);
    if (!get || !codec.decodeRecord || this.#cache.has(partitionLabel(ref))) return undefined;
    const json = await get(ref, key);
    if (json === undefined) return { value: undefined };
    try {
      return { value: codec.decodeRecord(JSON.parse(json)) };
    } catch (error) {
      const where = this.#records.locate?.(ref) ?? { partition: partitionLabel(ref) };
      throw new CorruptDataError(
        `Stored ${ref.kind} record "${key}" at ${Object.values(where).join(' ')} is not valid (${(error as Error).message}). Fix or move it; Kioku will not overwrite it.`,
        { cause: error, details: { ...where, key } },
      );
    }
  }

  /**
   * The partition's version (a version never comes back, see `RecordBackend.apply`): one version read,
   * or a scan for a backend without `version`, so a store's revision holds across processes and is
   * stable while nothing is written even when nothing is cached. An absent partition reads as version 0
   * before its first write and after its erasure alike, so it gets a new value on every call: a block
   * built from records written meanwhile is never taken for the erased partition's.
   */
  async revision(ref: PartitionRef): Promise<string> {
    const version = this.#records.version
      ? await this.#records.version(ref)
      : (await this.#records.scan(ref)).version;
    return version === 0 ? `absent.${++absentReads}` : `v${version}`;
  }

  /**
   * True when this process holds the partition decoded at its current version (the backend reports
   * versions): a read of it then costs one version read, and a search of it runs in memory.
   */
  async isCurrent(ref: PartitionRef): Promise<boolean> {
    const cached = this.#cache.get(partitionLabel(ref));
    if (!cached || !this.#records.version) return false;
    return (await this.#records.version(ref)) === cached.version;
  }

  /** Runs `run` after every earlier write of the partition from this process. */
  #queued<R>(ref: PartitionRef, run: () => Promise<R>): Promise<R> {
    const label = partitionLabel(ref);
    const previous = this.#queues.get(label) ?? Promise.resolve();
    const next = previous.then(run, run);
    this.#queues.set(label, next);
    next.then(
      () => this.#forget(label, next),
      () => this.#forget(label, next),
    );
    return next;
  }

  /** Drops the queue of `label` when `last` is still its last write (no function made per write for it). */
  #forget(label: string, last: Promise<unknown>): void {
    if (this.#queues.get(label) === last) this.#queues.delete(label);
  }

  async #write<S, R>(ref: PartitionRef, codec: PartitionCodec<S>, mutate: (state: S) => R): Promise<R> {
    const label = partitionLabel(ref);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      if (attempt > 0) await backoff(attempt);
      const loaded = await this.#load(ref, codec);
      const state = loaded.state as S;
      // A codec that tracks its changes is written O(changed); else (or over a partition stored whole) the
      // records before and after are compared.
      const tracking = tracks(codec) && !loaded.whole;
      let result: R;
      let next = loaded.records;
      let changes: RecordChanges;
      try {
        if (tracking) codec.track!(state);
        result = mutate(state);
        if (tracking) changes = this.#trackedChanges(ref, codec.tracked!(state));
        else {
          next = this.#known(ref, codec, state, loaded.records);
          changes = changesBetween(loaded.records, next, codec.keyOrdered === true);
        }
      } catch (error) {
        if (tracking) codec.tracked!(state);
        // A KiokuError from `mutate` (not found, conflict, capacity) comes before any change; anything
        // else, or a record over the limit, may have left the state changed: read it again next time.
        if (!(error instanceof KiokuError) || error instanceof RecordTooLargeError) this.#cache.delete(label);
        throw error;
      }
      if (changes.put.length === 0 && changes.delete.length === 0) return result;
      let version: number | null;
      try {
        version = await this.#records.apply(ref, loaded.version, changes);
      } catch (error) {
        this.#cache.delete(label);
        throw error;
      }
      if (version !== null) {
        if (this.#records.version)
          this.#remember(label, {
            version,
            state: loaded.state,
            records: tracking ? [] : next,
            whole: false,
          });
        return result;
      }
      this.#cache.delete(label);
    }
    throw new StorageError(
      `Gave up writing partition ${partitionLabel(ref)} after ${MAX_ATTEMPTS} concurrent changes.`,
    );
  }

  /** The changes a tracking codec reported, as records to apply (each checked against the limit). */
  #trackedChanges(ref: PartitionRef, tracked: TrackedRecords): RecordChanges {
    return {
      put: tracked.put.map(({ key, value, append }) => ({
        key,
        json: this.#json(ref, key, value),
        value,
        append,
      })),
      delete: tracked.delete,
    };
  }

  /** A value's JSON text, refused when it is over the backend's record limit. */
  #json(ref: PartitionRef, key: string, value: unknown): string {
    const json = JSON.stringify(value);
    // Each UTF-16 unit is at most 3 bytes of UTF-8: most records are cleared without encoding them.
    if (json.length * 3 > this.#limit) {
      const bytes = new TextEncoder().encode(json).length;
      if (bytes > this.#limit) throw new RecordTooLargeError(ref, key, bytes, this.#limit);
    }
    return json;
  }

  async replace<S>(ref: PartitionRef, codec: PartitionCodec<S>, state: S): Promise<void> {
    this.#cache.delete(partitionLabel(ref));
    const records = this.#known(ref, codec, state, []);
    await this.#records.replace(
      ref,
      records.map((r) => ({ key: r.key, json: r.json })),
    );
  }

  list(kind: StoreKind, userId?: string): Promise<PartitionRef[]> {
    return this.#records.listPartitions(kind, userId);
  }

  /** The partition decoded: from the cache when the backend reports the same version, else scanned. */
  async #load<S>(ref: PartitionRef, codec: PartitionCodec<S>): Promise<CachedPartition> {
    const label = partitionLabel(ref);
    if (this.#records.version) {
      const cached = this.#cache.get(label);
      if (cached && (await this.#records.version(ref)) === cached.version) {
        this.#remember(label, cached);
        return cached;
      }
    }
    const { version, records } = await this.#records.scan(ref);
    let keyed: KeyedRecord[];
    let state: S;
    try {
      // One parse of all records (as one JSON array) costs less than a parse per record.
      const values = JSON.parse(`[${records.map((r) => r.json).join(',')}]`) as unknown[];
      keyed = records.map((r, i) => ({ key: r.key, value: values[i] }));
      state = stateOf(codec, keyed);
    } catch (error) {
      if (error instanceof KiokuError) throw error;
      const where = this.#records.locate?.(ref) ?? { partition: label };
      throw new CorruptDataError(
        `Stored ${ref.kind} data at ${Object.values(where).join(' ')} is not valid (${(error as Error).message}). Fix or move it; Kioku will not overwrite it.`,
        { cause: error, details: where },
      );
    }
    const whole = records.length === 1 && records[0]!.key === WHOLE;
    const partition: CachedPartition = {
      version,
      state,
      records:
        tracks(codec) && !whole
          ? []
          : records.map((r, i) => ({ key: r.key, json: r.json, value: keyed[i]!.value })),
      whole,
    };
    if (this.#records.version) this.#remember(label, partition);
    return partition;
  }

  /** Keep `partition` as the most recently used, dropping the least recently used beyond the bound. */
  #remember(label: string, partition: CachedPartition): void {
    this.#cache.delete(label);
    this.#cache.set(label, partition);
    if (this.#cache.size > CACHED_PARTITIONS) this.#cache.delete(this.#cache.keys().next().value!);
  }

  /** The state's records with their JSON: unchanged value objects reuse the JSON they had. */
  #known<S>(ref: PartitionRef, codec: PartitionCodec<S>, state: S, before: KnownRecord[]): KnownRecord[] {
    if (codec.isEmpty(state)) return [];
    const keyed = codec.toRecords ? codec.toRecords(state) : [{ key: WHOLE, value: codec.encode(state) }];
    // Records mostly keep their place: match by position, and index `before` by key only past the first miss.
    let old: Map<string, KnownRecord> | undefined;
    return keyed.map(({ key, value }, i) => {
      const same = before[i];
      if (same && same.key === key && same.value === value) return same;
      old ??= new Map(before.map((r) => [r.key, r]));
      const known = old.get(key);
      if (known && known.value === value) return known;
      return { key, value, json: this.#json(ref, key, value) };
    });
  }
}

/** A short random wait before retrying against another process's write (grows with the attempts). */
function backoff(attempt: number): Promise<void> {
  const ms = Math.random() * Math.min(50, 2 ** attempt);
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * The state of scanned records. A partition stored whole (one record under the empty key: a codec
 * without `toRecords`, or data written before its kind was split into records) is decoded whole; the
 * next write then stores it record by record.
 */
function stateOf<S>(codec: PartitionCodec<S>, keyed: readonly KeyedRecord[]): S {
  if (keyed.length === 0) return codec.empty();
  if (keyed.length === 1 && keyed[0]!.key === WHOLE) return codec.decode(keyed[0]!.value);
  if (codec.fromRecords) return codec.fromRecords(keyed);
  return codec.decode(keyed[0]!.value);
}

/**
 * What turns `before` into `after`: deleted keys, changed records in place, and — from the first record
 * out of its old order on (a record moved to the end, or a new one) — the rest appended in order.
 */
export function diff(before: readonly StoredRecord[], after: readonly StoredRecord[]): RecordChanges {
  const known = (r: StoredRecord): KnownRecord => ({ key: r.key, json: r.json, value: undefined });
  return changesBetween(before.map(known), after.map(known), false);
}

/**
 * `diff` over known records. With `keyOrdered` (the codec orders records by their keys or values, not
 * by their place) only new, changed and deleted records are written, whatever their order.
 */
function changesBetween(
  before: readonly KnownRecord[],
  after: readonly KnownRecord[],
  keyOrdered: boolean,
): RecordChanges {
  // The unchanged head (the same known records, in place) costs one comparison per record.
  let head = 0;
  while (head < before.length && head < after.length && before[head] === after[head]) head++;
  if (head === before.length) {
    // Only appended records: the common write (a create, a transcript append).
    return { put: after.slice(head).map((r) => ({ key: r.key, json: r.json, append: true })), delete: [] };
  }
  const rest = before.slice(head);
  const tail = after.slice(head);
  const afterKeys = new Set(tail.map((r) => r.key));
  const old = new Map(rest.map((r) => [r.key, r]));
  const put: Array<StoredRecord & { append: boolean }> = [];
  const deleted = rest.filter((r) => !afterKeys.has(r.key)).map((r) => r.key);
  if (keyOrdered) {
    for (const record of tail) {
      const previous = old.get(record.key);
      if (!previous) put.push({ key: record.key, json: record.json, append: true });
      else if (previous !== record && previous.json !== record.json)
        put.push({ key: record.key, json: record.json, append: false });
    }
    return { put, delete: deleted };
  }
  const kept = rest.filter((r) => afterKeys.has(r.key));
  let inPlace = 0;
  while (inPlace < tail.length && inPlace < kept.length && tail[inPlace]!.key === kept[inPlace]!.key)
    inPlace++;
  tail.forEach((record, i) => {
    if (i >= inPlace) put.push({ key: record.key, json: record.json, append: true });
    else {
      const previous = old.get(record.key)!;
      if (previous !== record && previous.json !== record.json)
        put.push({ key: record.key, json: record.json, append: false });
    }
  });
  return { put, delete: deleted };
}
