import type { z } from 'zod';
import { LexicalIndex, type LexicalIndexOptions } from '../search/lexical-index.js';
import type { PartitionCodec, PartitionKind } from './partition.js';

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
 * Records of one partition in insertion order, with a lexical index built on first search and then
 * kept in step with every write. Shared by facts, documents, details, working memory and session lists.
 */
export class RecordPartition<T> {
  readonly records = new Map<string, T>();
  #index: LexicalIndex | undefined;
  /** Derived arrays (e.g. records in some order), dropped on every change. */
  readonly #views = new Map<string, readonly T[]>();
  readonly #spec: RecordPartitionSpec<T>;

  constructor(spec: RecordPartitionSpec<T>, records: Iterable<T> = []) {
    this.#spec = spec;
    for (const record of records) this.records.set(spec.idOf(record), deepFreeze(record));
  }

  get size(): number {
    return this.records.size;
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
    this.#indexRecord(record);
    this.#views.clear();
  }

  delete(id: string): T | undefined {
    const previous = this.records.get(id);
    if (previous === undefined) return undefined;
    this.records.delete(id);
    this.#unindex(previous);
    this.#views.clear();
    return previous;
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

export interface RecordFile<T> {
  kind: PartitionKind;
  schemaVersion: 1;
  records: T[];
}

/** A codec that stores a RecordPartition as `{ kind, schemaVersion, records: [...] }`, validated with zod. */
export function recordPartitionCodec<T>(
  kind: PartitionKind,
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
  };
}
