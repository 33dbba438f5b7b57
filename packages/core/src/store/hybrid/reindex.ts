import type { Scope } from '../../foundation/scope.js';
import type { KindMapping } from './kinds.js';
import type { VectorSide } from './vector-side.js';

export interface ReindexReport {
  /** Index partitions (user + agent) rebuilt. */
  partitions: number;
  /** Records read from the store. */
  records: number;
  /** Vectors written. */
  vectors: number;
  /** Vectors removed first (the partition's old vectors of this kind). */
  removed: number;
}

/**
 * Rebuild the vectors of one kind for the partitions these records belong to: per partition, remove
 * every vector of the kind (old models, records that are gone), then embed and write the records'.
 * Partitions are processed one after another; records of one partition are embedded in batches.
 */
export async function reindexRecords<R>(
  side: VectorSide,
  mapping: KindMapping<R>,
  records: readonly R[],
  options: { signal?: AbortSignal; extraScopes?: readonly Scope[] } = {},
): Promise<ReindexReport> {
  const groups = new Map<string, { scope: Scope; records: R[] }>();
  const key = (s: Scope) => JSON.stringify([s.userId, s.agentId ?? null]);
  for (const scope of options.extraScopes ?? []) groups.set(key(scope), { scope, records: [] });
  for (const record of records) {
    const scope = mapping.scopeOf(record);
    const k = key(scope);
    let group = groups.get(k);
    if (!group) {
      group = { scope, records: [] };
      groups.set(k, group);
    }
    group.records.push(record);
  }
  const report: ReindexReport = { partitions: 0, records: records.length, vectors: 0, removed: 0 };
  for (const { scope, records: rs } of groups.values()) {
    options.signal?.throwIfAborted();
    report.removed += await side.index.clear(scope, { kind: mapping.kind });
    side.resetModelChecks();
    report.vectors += await side.write(
      scope,
      rs.flatMap((r) => mapping.entriesOf(r)),
      options.signal ? { signal: options.signal } : {},
    );
    report.partitions++;
  }
  return report;
}
