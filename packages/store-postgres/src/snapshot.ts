import {
  type PartitionKind,
  parseEnvelope,
  parseOrThrow,
  type RestoreOptions,
  ScopeError,
  type SnapshotSelector,
  SnapshotSelectorSchema,
  ValidationError,
} from '@kioku/core';

/** The user a snapshot selects, or undefined for `{ allUsers: true }`. */
export function selectedUser(selector: SnapshotSelector): { parsed: SnapshotSelector; userId?: string } {
  const parsed = parseOrThrow(SnapshotSelectorSchema, selector, 'snapshot selector');
  return 'userId' in parsed ? { parsed, userId: parsed.userId } : { parsed };
}

/**
 * Validate a snapshot completely (core's envelope parser: header, version, kind, every record) and, with
 * `options.userId`, refuse records of any other user — all before anything is written.
 */
export function parseSnapshot<R>(
  kind: PartitionKind,
  recordSchema: Parameters<typeof parseEnvelope<R>>[1],
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

/**
 * Group records by partition (`keyOf`), in snapshot order, refusing two records with one id in a partition
 * (the same rule and message as core's restore).
 */
export function groupByPartition<R, K>(
  records: readonly R[],
  partitionOf: (record: R) => K,
  keyOf: (partition: K) => string,
  idOf: (record: R) => string,
): Array<{ partition: K; records: R[] }> {
  const groups = new Map<string, { partition: K; records: R[]; ids: Set<string> }>();
  for (const record of records) {
    const partition = partitionOf(record);
    const key = keyOf(partition);
    let group = groups.get(key);
    if (!group) {
      group = { partition, records: [], ids: new Set() };
      groups.set(key, group);
    }
    const id = idOf(record);
    if (group.ids.has(id))
      throw new ValidationError(`Snapshot has two records with id "${id}" in one partition.`);
    group.ids.add(id);
    group.records.push(record);
  }
  return [...groups.values()].map(({ partition, records: rs }) => ({ partition, records: rs }));
}
