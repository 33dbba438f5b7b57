import type { StoreKind } from '../kinds.js';
import { type PartitionRef, partitionLabel } from './partition.js';
import type { RecordBackend, RecordChanges, StoredRecord } from './record-backend.js';

interface MemoryPartition {
  ref: PartitionRef;
  /** In partition order. */
  records: Map<string, string>;
}

/**
 * A record-level backend in process memory: the reference for `RecordBackend` (every method, the
 * optional `version`, `get` and `insert` too), and the one the conformance suite runs every store kind over to prove the seam.
 */
export class InMemoryRecordBackend implements RecordBackend {
  readonly #partitions = new Map<string, MemoryPartition>();
  /** Versions outlive a partition's records, so a writer that read it before it was emptied still loses. */
  readonly #versions = new Map<string, number>();

  async scan(ref: PartitionRef): Promise<{ version: number; records: StoredRecord[] }> {
    const label = partitionLabel(ref);
    const partition = this.#partitions.get(label);
    const version = this.#versions.get(label) ?? 0;
    if (!partition) return { version, records: [] };
    return { version, records: [...partition.records].map(([key, json]) => ({ key, json })) };
  }

  async version(ref: PartitionRef): Promise<number> {
    return this.#versions.get(partitionLabel(ref)) ?? 0;
  }

  async apply(ref: PartitionRef, expectedVersion: number, changes: RecordChanges): Promise<number | null> {
    const label = partitionLabel(ref);
    if ((this.#versions.get(label) ?? 0) !== expectedVersion) return null;
    const partition = this.#partitions.get(label) ?? { ref: { ...ref }, records: new Map() };
    for (const key of changes.delete) partition.records.delete(key);
    for (const record of changes.put) {
      if (record.append) partition.records.delete(record.key);
      partition.records.set(record.key, record.json);
    }
    this.#versions.set(label, expectedVersion + 1);
    if (partition.records.size === 0) this.#partitions.delete(label);
    else this.#partitions.set(label, partition);
    return expectedVersion + 1;
  }

  async get(ref: PartitionRef, key: string): Promise<string | undefined> {
    return this.#partitions.get(partitionLabel(ref))?.records.get(key);
  }

  async insert(ref: PartitionRef, record: StoredRecord): Promise<boolean> {
    const label = partitionLabel(ref);
    const partition = this.#partitions.get(label) ?? { ref: { ...ref }, records: new Map() };
    if (partition.records.has(record.key)) return false;
    partition.records.set(record.key, record.json);
    this.#partitions.set(label, partition);
    this.#versions.set(label, (this.#versions.get(label) ?? 0) + 1);
    return true;
  }

  async replace(ref: PartitionRef, records: readonly StoredRecord[]): Promise<void> {
    const label = partitionLabel(ref);
    this.#versions.set(label, (this.#versions.get(label) ?? 0) + 1);
    if (records.length === 0) this.#partitions.delete(label);
    else {
      this.#partitions.set(label, {
        ref: { ...ref },
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
