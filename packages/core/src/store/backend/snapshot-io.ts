import type { z } from 'zod';
import type { Clock } from '../../foundation/clock.js';
import { type SnapshotSelector, SnapshotSelectorSchema } from '../../foundation/scope.js';
import { parseOrThrow } from '../../foundation/validation.js';
import type { StoreKind } from '../kinds.js';
import {
  makeEnvelope,
  type RestoreOptions,
  type RestoreReport,
  type SnapshotEnvelope,
} from '../snapshot/envelope.js';
import { groupRecords, parseSnapshotRecords } from '../snapshot/restore.js';
import type { PartitionBackend, PartitionCodec, PartitionRef } from './partition.js';
import { partitionLabel } from './partition.js';

export interface PartitionState<S> {
  ref: PartitionRef;
  state: S;
  /** The codec for this partition when it differs from the mapping's (sessions keep two shapes). */
  codec?: PartitionCodec<S>;
}

/** How one store kind maps between snapshot records and partitions. */
export interface SnapshotMapping<R, S> {
  kind: StoreKind;
  recordSchema: z.ZodType<R>;
  codec: PartitionCodec<S>;
  /** The partitions to read for a snapshot (default: every partition of `kind`). */
  partitions?(backend: PartitionBackend, userId: string | undefined): Promise<PartitionRef[]>;
  /** Records of one partition, in stored order. */
  recordsOf(state: S, ref: PartitionRef, backend: PartitionBackend): R[] | Promise<R[]>;
  userIdOf(record: R): string;
  /** Group validated records into partition states. Throws ValidationError on duplicates. */
  toPartitions(records: R[]): PartitionState<S>[];
}

export async function snapshotPartitions<R, S>(
  backend: PartitionBackend,
  mapping: SnapshotMapping<R, S>,
  selector: SnapshotSelector,
  clock: Clock,
): Promise<SnapshotEnvelope<R>> {
  const parsed = parseOrThrow(SnapshotSelectorSchema, selector, 'snapshot selector');
  const userId = 'userId' in parsed ? parsed.userId : undefined;
  const refs = mapping.partitions
    ? await mapping.partitions(backend, userId)
    : await backend.list(mapping.kind, userId);
  refs.sort((a, b) => partitionLabel(a).localeCompare(partitionLabel(b)));
  const records: R[] = [];
  for (const ref of refs) {
    const state = await backend.read(ref, mapping.codec);
    records.push(...(await mapping.recordsOf(state, ref, backend)));
  }
  return makeEnvelope(mapping.kind, parsed, records, clock);
}

export async function restorePartitions<R, S>(
  backend: PartitionBackend,
  mapping: SnapshotMapping<R, S>,
  input: unknown,
  options: RestoreOptions = {},
): Promise<RestoreReport> {
  const records = parseSnapshotRecords(mapping.kind, mapping.recordSchema, input, options, mapping.userIdOf);
  const partitions = mapping.toPartitions(records);
  for (const { ref, state, codec } of partitions) await backend.replace(ref, codec ?? mapping.codec, state);
  return { records: records.length, partitions: partitions.length };
}

/** Group records by partition label, rejecting duplicate ids within a partition. */
export function groupByPartition<R>(
  records: R[],
  refOf: (record: R) => PartitionRef,
  idOf: (record: R) => string,
): Array<{ ref: PartitionRef; records: R[] }> {
  return groupRecords(records, (r) => partitionLabel(refOf(r)), idOf).map((group) => ({
    ref: refOf(group[0]!),
    records: group,
  }));
}

/**
 * Erase every partition of `mapping.kind` that belongs to `userId` — sub-partitions too (session data,
 * working-memory namespaces) — and return the ids of the records they held when read just before.
 * Replacing a partition with an empty state deletes it on every backend.
 */
export async function erasePartitions<R, S>(
  backend: PartitionBackend,
  mapping: SnapshotMapping<R, S>,
  userId: string,
  idOf: (record: R) => string,
): Promise<string[]> {
  parseOrThrow(SnapshotSelectorSchema, { userId }, 'user id');
  const recordRefs = mapping.partitions
    ? await mapping.partitions(backend, userId)
    : await backend.list(mapping.kind, userId);
  const ids: string[] = [];
  for (const ref of recordRefs) {
    const state = await backend.read(ref, mapping.codec);
    for (const record of await mapping.recordsOf(state, ref, backend)) ids.push(idOf(record));
  }
  for (const ref of await backend.list(mapping.kind, userId)) {
    await backend.replace(ref, mapping.codec, mapping.codec.empty());
  }
  return ids;
}
