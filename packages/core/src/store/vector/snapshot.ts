import { z } from 'zod';
import { type Clock, isoAt } from '../../foundation/clock.js';
import { ScopeError, UnsupportedError, ValidationError } from '../../foundation/errors.js';
import { IdSchema } from '../../foundation/ids.js';
import { OptionalAgentIdSchema } from '../../foundation/record-fields.js';
import { type SnapshotSelector, SnapshotSelectorSchema } from '../../foundation/scope.js';
import { parseOrThrow } from '../../foundation/validation.js';
import { SNAPSHOT_FORMAT, SNAPSHOT_SCHEMA_VERSION } from '../snapshot/envelope.js';
import { VectorPointSchema } from './record.js';

/** One stored point with its owner, as vector snapshots carry it. */
export const VectorRecordSchema = VectorPointSchema.extend({
  userId: IdSchema,
  agentId: OptionalAgentIdSchema,
});

export type VectorRecord = z.output<typeof VectorRecordSchema>;

export const VECTOR_SNAPSHOT_KIND = 'vectors';

/**
 * A vector index's export: the same versioned envelope as the stores' snapshots (`format`,
 * `schemaVersion`, `kind`, `createdAt`, `selector`), plus the vectors' `dimensions`, so a snapshot taken
 * from the in-memory index restores into Qdrant and back.
 */
export interface VectorSnapshot {
  format: typeof SNAPSHOT_FORMAT;
  schemaVersion: typeof SNAPSHOT_SCHEMA_VERSION;
  kind: typeof VECTOR_SNAPSHOT_KIND;
  createdAt: string;
  selector: SnapshotSelector;
  dimensions: number;
  records: VectorRecord[];
}

/** Records sorted by owner, then id, so two snapshots of the same data are equal. */
export function makeVectorSnapshot(
  selector: SnapshotSelector,
  dimensions: number,
  records: VectorRecord[],
  clock: Clock,
): VectorSnapshot {
  const parsed = parseOrThrow(SnapshotSelectorSchema, selector, 'snapshot selector');
  const key = (r: VectorRecord) => `${r.userId}\u0000${r.agentId ?? ''}\u0000${r.id}`;
  return {
    format: SNAPSHOT_FORMAT,
    schemaVersion: SNAPSHOT_SCHEMA_VERSION,
    kind: VECTOR_SNAPSHOT_KIND,
    createdAt: isoAt(clock),
    selector: 'userId' in parsed ? { userId: parsed.userId } : { allUsers: true },
    dimensions,
    records: [...records].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0)),
  };
}

const HeaderSchema = z.object({
  format: z.literal(SNAPSHOT_FORMAT),
  schemaVersion: z.number().int(),
  kind: z.string(),
});

const VectorSnapshotSchema = z.object({
  format: z.literal(SNAPSHOT_FORMAT),
  schemaVersion: z.literal(SNAPSHOT_SCHEMA_VERSION),
  kind: z.literal(VECTOR_SNAPSHOT_KIND),
  createdAt: z.iso.datetime(),
  selector: SnapshotSelectorSchema,
  dimensions: z.number().int().min(1).max(16_384),
  records: z.array(VectorRecordSchema),
});

/** One partition's points, ready to replace what the index holds for that user + agent. */
export interface VectorPartition {
  userId: string;
  agentId?: string;
  records: VectorRecord[];
}

/**
 * Validate a vector snapshot completely before anything is written: header, version, kind, every
 * record, the dimensions (they must equal the index's), duplicate ids within a partition and, with
 * `options.userId`, the owner of every record. Returns the records grouped by partition.
 */
export function parseVectorSnapshot(
  input: unknown,
  dimensions: number,
  options: { userId?: string } = {},
): VectorPartition[] {
  const header = parseOrThrow(HeaderSchema, input, 'snapshot envelope');
  if (header.schemaVersion !== SNAPSHOT_SCHEMA_VERSION) {
    throw new UnsupportedError(
      `Snapshot schemaVersion ${header.schemaVersion} is not supported (this version reads ${SNAPSHOT_SCHEMA_VERSION}).`,
      { details: { schemaVersion: header.schemaVersion } },
    );
  }
  if (header.kind !== VECTOR_SNAPSHOT_KIND) {
    throw new ValidationError(`This is a "${header.kind}" snapshot; a vector index cannot restore it.`);
  }
  const snapshot = parseOrThrow(VectorSnapshotSchema, input, 'vector snapshot');
  const mismatch = snapshot.records.find((r) => r.vector.length !== dimensions);
  if (snapshot.dimensions !== dimensions || mismatch) {
    throw new ValidationError(
      `The snapshot holds ${mismatch?.vector.length ?? snapshot.dimensions}-dimensional vectors; this index holds ${dimensions}-dimensional vectors.`,
      { details: { expected: dimensions, actual: mismatch?.vector.length ?? snapshot.dimensions } },
    );
  }
  if (options.userId !== undefined && snapshot.records.some((r) => r.userId !== options.userId)) {
    throw new ScopeError(
      `Snapshot contains records of another user; restoring into user "${options.userId}" is refused.`,
    );
  }
  const partitions = new Map<string, VectorPartition & { ids: Set<string> }>();
  for (const record of snapshot.records) {
    const key = `${record.userId}\u0000${record.agentId ?? ''}`;
    let partition = partitions.get(key);
    if (!partition) {
      partition = {
        userId: record.userId,
        ...(record.agentId === undefined ? {} : { agentId: record.agentId }),
        records: [],
        ids: new Set(),
      };
      partitions.set(key, partition);
    }
    if (partition.ids.has(record.id)) {
      throw new ValidationError(`Snapshot holds the point "${record.id}" twice in one partition.`, {
        details: { userId: record.userId, agentId: record.agentId, id: record.id },
      });
    }
    partition.ids.add(record.id);
    partition.records.push(record);
  }
  return [...partitions.values()].map(({ ids: _ids, ...partition }) => partition);
}
