import type { z } from 'zod';
import { LexicalIndex, type LexicalIndexOptions } from '../../search/lexical-index.js';
import type { StoreKind } from '../kinds.js';
import type { PartitionCodec, TrackedRecords } from './partition.js';

/** One searchable unit of a record (a fact is one; a document has one per chunk). */
export interface IndexEntry {
  key: string;
  text: string;
}

export interface RecordPartitionSpec<T> {
  idOf(record: T): string;
  /** What to index for a record; omit for kinds that are never searched. */
  indexEntries?(record: T): IndexEntry[];
  search?: LexicalIndexOptions;
  /**
   * Orders kept sorted as records change, by name (e.g. facts newest-updated first). Each comparator must
   * be a total order (no two records equal), so a record's place is found by binary search. A new record
   * is cheapest when it sorts first (the newest, in a newest-first order): see `OrderedRecords`.
   */
  orders?: Record<string, (a: T, b: T) => number>;
  /**
   * A record read alone (`decodeRecord`) of the kind's exact shape, checked more cheaply than by the
   * schema; undefined when it is not, and the schema decides. Omit to check every record by the schema.
   */
  ofShape?(value: unknown): T | undefined;
}

/**
 * Records are frozen when stored, so the objects a store hands out can be returned without copying
 * and no caller can change stored data behind the store's back.
 */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * A partition's records in one of its spec's orders, read by position (0 is the first in that order).
 * Kept last-first in an array, so that a record sorting first — a new fact in the newest-updated order, the
 * write of nearly every turn — is appended instead of moving every other pointer (at 100k facts a
 * splice at the front moved 800 kB a write).
 */
export class OrderedRecords<T> {
  /** The records, last in the order first. */
  readonly #lastFirst: T[];

  constructor(lastFirst: T[]) {
    this.#lastFirst = lastFirst;
  }

  get length(): number {
    return this.#lastFirst.length;
  }

  /** The records at positions [from, to) of the order (to: the end by default). */
  slice(from: number, to = this.#lastFirst.length): T[] {
    const n = this.#lastFirst.length;
    const end = Math.min(to, n);
    const out: T[] = [];
    for (let at = Math.max(0, from); at < end; at++) out.push(this.#lastFirst[n - 1 - at]!);
    return out;
  }

  *[Symbol.iterator](): Iterator<T> {
    for (let at = this.#lastFirst.length - 1; at >= 0; at--) yield this.#lastFirst[at]!;
  }
}

/**
 * Records of one partition in insertion order, with a lexical index built on first search and then
 * kept in step with every write. Shared by facts, documents, details, working memory and session lists.
 */
/** RecordPartition objects created in this process (each one's `revision` starts with its number). */
let partitions = 0;

export class RecordPartition<T> {
  readonly records = new Map<string, T>();
  #index: LexicalIndex | undefined;
  /** Derived arrays (e.g. records in some order), dropped on every change. */
  readonly #views = new Map<string, readonly T[]>();
  /** The spec's `orders`, each built on first use and then kept in step with every write (last first). */
  readonly #sorted = new Map<
    string,
    { lastFirst: T[]; lastFirstOrder: (a: T, b: T) => number; view: OrderedRecords<T> }
  >();
  readonly #spec: RecordPartitionSpec<T>;
  /** This object's number in the process, and its puts and deletes so far: see `revision`. */
  readonly #epoch = ++partitions;
  #writes = 0;
  /** While tracked: each changed id, in the order appended ones now stand (see `track`). */
  #changes: Map<string, 'append' | 'update' | 'delete'> | undefined;

  constructor(spec: RecordPartitionSpec<T>, records: Iterable<T> = []) {
    this.#spec = spec;
    for (const record of records) this.records.set(spec.idOf(record), deepFreeze(record));
  }

  get size(): number {
    return this.records.size;
  }

  /**
   * Changes with every put and delete, and differs between two partition objects (a partition read again
   * from storage, or restored, is a new object): equal revisions mean the same records.
   */
  get revision(): string {
    return `${this.#epoch}.${this.#writes}`;
  }

  get(id: string): T | undefined {
    return this.records.get(id);
  }

  /** Insert or replace; a replaced record keeps its position unless `moveToEnd` is set. */
  put(record: T, options: { moveToEnd?: boolean } = {}): void {
    const id = this.#spec.idOf(record);
    const previous = this.records.get(id);
    if (previous !== undefined) {
      this.#unindex(previous);
      if (options.moveToEnd) this.records.delete(id);
    }
    this.records.set(id, deepFreeze(record));
    this.#writes++;
    if (this.#changes) {
      if (previous === undefined || options.moveToEnd) {
        // Re-set so appended ids stay in the order they now hold at the end of the partition.
        this.#changes.delete(id);
        this.#changes.set(id, 'append');
      } else if (!this.#changes.has(id)) this.#changes.set(id, 'update');
    }
    this.#indexRecord(record);
    this.#views.clear();
    for (const { lastFirst, lastFirstOrder } of this.#sorted.values()) {
      if (previous !== undefined) removeSorted(lastFirst, previous, lastFirstOrder);
      const at = lowerBound(lastFirst, record, lastFirstOrder);
      if (at === lastFirst.length) lastFirst.push(record);
      else lastFirst.splice(at, 0, record);
    }
  }

  delete(id: string): T | undefined {
    const previous = this.records.get(id);
    if (previous === undefined) return undefined;
    this.records.delete(id);
    this.#writes++;
    this.#changes?.set(id, 'delete');
    this.#unindex(previous);
    this.#views.clear();
    for (const { lastFirst, lastFirstOrder } of this.#sorted.values()) {
      removeSorted(lastFirst, previous, lastFirstOrder);
    }
    return previous;
  }

  /**
   * The records in the spec's order `name`, sorted once and then updated by binary search on every put
   * and delete (a write to a 100k-record partition moves pointers instead of re-sorting). Live: it shows
   * later writes, so callers copy (`slice`) what they keep.
   */
  sorted(name: string): OrderedRecords<T> {
    let sorted = this.#sorted.get(name);
    if (!sorted) {
      const compare = this.#spec.orders?.[name];
      if (!compare) throw new Error(`No order "${name}" in this partition's spec.`);
      const lastFirstOrder = (a: T, b: T) => compare(b, a);
      const lastFirst = [...this.records.values()].sort(lastFirstOrder);
      sorted = { lastFirst, lastFirstOrder, view: new OrderedRecords(lastFirst) };
      this.#sorted.set(name, sorted);
    }
    return sorted.view;
  }

  /** `compute()` remembered until the next put or delete (callers must not change the array). */
  view(name: string, compute: () => T[]): readonly T[] {
    let view = this.#views.get(name);
    if (!view) {
      view = Object.freeze(compute());
      this.#views.set(name, view);
    }
    return view;
  }

  /** Starts noting the ids every put and delete changes, until `tracked()` hands them over. */
  track(): void {
    this.#changes = new Map();
  }

  /** What changed since `track()`: puts (appended ones in their new order) and deletes; stops noting. */
  tracked(): TrackedRecords {
    const changes = this.#changes ?? new Map();
    this.#changes = undefined;
    const put: Array<{ key: string; value: unknown; append: boolean }> = [];
    const deleted: string[] = [];
    for (const [key, change] of changes) {
      if (change === 'delete') deleted.push(key);
      else put.push({ key, value: this.records.get(key), append: change === 'append' });
    }
    return { put, delete: deleted };
  }

  /** The lexical index over this partition, built on first use. */
  index(): LexicalIndex {
    if (!this.#index) {
      const index = new LexicalIndex(this.#spec.search);
      const entriesOf = this.#spec.indexEntries;
      if (entriesOf) {
        for (const record of this.records.values()) {
          for (const entry of entriesOf(record)) index.set(entry.key, entry.text);
        }
      }
      this.#index = index;
    }
    return this.#index;
  }

  #indexRecord(record: T): void {
    if (!this.#index || !this.#spec.indexEntries) return;
    for (const entry of this.#spec.indexEntries(record)) this.#index.set(entry.key, entry.text);
  }

  #unindex(record: T): void {
    if (!this.#index || !this.#spec.indexEntries) return;
    for (const entry of this.#spec.indexEntries(record)) this.#index.remove(entry.key);
  }
}

/** The first index whose element sorts after `record` (where `record` goes). */
function lowerBound<T>(sorted: readonly T[], record: T, compare: (a: T, b: T) => number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (compare(sorted[mid]!, record) < 0) low = mid + 1;
    else high = mid;
  }
  return low;
}

function removeSorted<T>(sorted: T[], record: T, compare: (a: T, b: T) => number): void {
  const at = lowerBound(sorted, record, compare);
  if (sorted[at] === record) sorted.splice(at, 1);
  else {
    // Only reachable with a comparator that is not a total order: fall back to a scan.
    const index = sorted.indexOf(record);
    if (index !== -1) sorted.splice(index, 1);
  }
}

export interface RecordFile<T> {
  kind: StoreKind;
  schemaVersion: 1;
  records: T[];
}

/** A codec that stores a RecordPartition as `{ kind, schemaVersion, records: [...] }`, validated with zod. */
export function recordPartitionCodec<T>(
  kind: StoreKind,
  recordSchema: z.ZodType<T>,
  spec: RecordPartitionSpec<T>,
): PartitionCodec<RecordPartition<T>> {
  return {
    empty: () => new RecordPartition(spec),
    decode(data) {
      const file = data as Partial<RecordFile<unknown>> | null;
      if (!file || typeof file !== 'object' || file.kind !== kind || !Array.isArray(file.records)) {
        throw new Error(`expected an object { "kind": "${kind}", "schemaVersion": 1, "records": [...] }`);
      }
      if (file.schemaVersion !== 1)
        throw new Error(`unsupported schemaVersion ${String(file.schemaVersion)}`);
      const records = file.records.map((raw, i) => {
        const parsed = recordSchema.safeParse(raw);
        if (!parsed.success) {
          const issue = parsed.error.issues[0];
          throw new Error(`records[${i}].${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`);
        }
        return parsed.data;
      });
      return new RecordPartition(spec, records);
    },
    encode(state): RecordFile<T> {
      return { kind, schemaVersion: 1, records: [...state.records.values()] };
    },
    isEmpty: (state) => state.size === 0,
    toRecords: (state) => [...state.records].map(([key, value]) => ({ key, value })),
    // Not frozen: a record read alone is the caller's own copy, shared with no cached partition.
    decodeRecord(value) {
      const shaped = spec.ofShape?.(value);
      if (shaped !== undefined) return shaped;
      const parsed = recordSchema.safeParse(value);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new Error(`${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`);
      }
      return parsed.data;
    },
    track: (state) => state.track(),
    tracked: (state) => state.tracked(),
    fromRecords(records) {
      return this.decode({ kind, schemaVersion: 1, records: records.map((r) => r.value) });
    },
  };
}
