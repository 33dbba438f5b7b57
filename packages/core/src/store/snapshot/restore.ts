import type { z } from 'zod';
import { ScopeError, ValidationError } from '../../foundation/errors.js';
import type { StoreKind } from '../kinds.js';
import { parseEnvelope, type RestoreOptions } from './envelope.js';

/** How one kind's snapshot records map to partitions, for `planRestore`. */
export interface RestoreSpec<R> {
  userIdOf(record: R): string;
  /** The partition a record belongs to, as a stable string (user, agent, and thread or session). */
  partitionOf(record: R): string;
  /** The record's id within its partition (two records with one id in a partition are refused). */
  idOf(record: R): string;
  /** Records to restore (default: all); the others are validated but dropped (e.g. expired entries). */
  keep?(record: R): boolean;
}

/** A snapshot checked in full and grouped by partition, ready for an adapter to write. */
export interface RestorePlan<R> {
  /** Each partition's records in snapshot order. */
  partitions: R[][];
  /** Records in the snapshot (kept or not). */
  records: number;
}

/**
 * A snapshot's records after every check a restore makes before it writes: the envelope (header, version,
 * kind, every record against the schema) and, with `options.userId`, no record of another user.
 */
export function parseSnapshotRecords<R>(
  kind: StoreKind,
  recordSchema: z.ZodType<R>,
  input: unknown,
  options: RestoreOptions,
  userIdOf: (record: R) => string,
): R[] {
  const envelope = parseEnvelope(kind, recordSchema, input);
  if (options.userId !== undefined && envelope.records.some((r) => userIdOf(r) !== options.userId)) {
    throw new ScopeError(
      `Snapshot contains records of another user; restoring into user "${options.userId}" is refused.`,
    );
  }
  return envelope.records;
}

/** Records grouped by partition in snapshot order; two records with one id in a partition are refused. */
export function groupRecords<R>(
  records: readonly R[],
  partitionOf: (record: R) => string,
  idOf: (record: R) => string,
): R[][] {
  const groups = new Map<string, { ids: Set<string>; records: R[] }>();
  for (const record of records) {
    const key = partitionOf(record);
    let group = groups.get(key);
    if (!group) {
      group = { ids: new Set(), records: [] };
      groups.set(key, group);
    }
    const id = idOf(record);
    if (group.ids.has(id)) {
      throw new ValidationError(`Snapshot has two records with id "${id}" in one partition.`, {
        details: { id },
      });
    }
    group.ids.add(id);
    group.records.push(record);
  }
  return [...groups.values()].map((g) => g.records);
}

/**
 * Everything a restore checks before it writes, for every store alike (see `parseSnapshotRecords` and
 * `groupRecords`), with the records to keep grouped by partition. Throws VALIDATION or SCOPE; writes
 * nothing.
 */
export function planRestore<R>(
  kind: StoreKind,
  recordSchema: z.ZodType<R>,
  input: unknown,
  options: RestoreOptions,
  spec: RestoreSpec<R>,
): RestorePlan<R> {
  const records = parseSnapshotRecords(kind, recordSchema, input, options, spec.userIdOf);
  const kept = spec.keep ? records.filter((r) => spec.keep!(r)) : records;
  return { partitions: groupRecords(kept, spec.partitionOf, spec.idOf), records: records.length };
}
