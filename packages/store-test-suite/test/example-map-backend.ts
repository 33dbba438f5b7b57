// The example of docs/WRITING-AN-ADAPTER.md, verbatim: a complete storage adapter in four methods.
import type { StoreKind } from '@kioku/core';
import type { PartitionRef, RecordChanges, StorageBackend, StoredRecord } from '@kioku/core/adapter';

interface Partition {
  ref: PartitionRef;
  version: number;
  records: Map<string, string>; // key → JSON text, in partition order
}

export class MapBackend implements StorageBackend {
  readonly #partitions = new Map<string, Partition>();
  #nextVersion = 1; // one counter for every partition: a version never comes back

  async scan(ref: PartitionRef) {
    const p = this.#partitions.get(label(ref));
    return {
      version: p?.version ?? 0,
      records: [...(p?.records ?? [])].map(([key, json]) => ({ key, json })),
    };
  }

  async apply(ref: PartitionRef, expectedVersion: number, changes: RecordChanges) {
    const p = this.#partitions.get(label(ref)) ?? { ref, version: 0, records: new Map<string, string>() };
    if (p.version !== expectedVersion) return null; // another writer got there first
    for (const key of changes.delete) p.records.delete(key);
    for (const { key, json, append } of changes.put) {
      if (append) p.records.delete(key); // appended records go last
      p.records.set(key, json);
    }
    p.version = this.#nextVersion++;
    this.#store(p);
    return p.version;
  }

  async replace(ref: PartitionRef, records: readonly StoredRecord[]) {
    this.#store({ ref, version: this.#nextVersion++, records: new Map(records.map((r) => [r.key, r.json])) });
  }

  async listPartitions(kind: StoreKind, userId?: string) {
    return [...this.#partitions.values()]
      .filter((p) => p.ref.kind === kind && (userId === undefined || p.ref.userId === userId))
      .map((p) => p.ref);
  }

  #store(p: Partition) {
    if (p.records.size === 0) this.#partitions.delete(label(p.ref));
    else this.#partitions.set(label(p.ref), p);
  }
}

const label = (ref: PartitionRef) =>
  JSON.stringify([ref.kind, ref.userId, ref.agentId ?? '', ref.name ?? '']);
