import { groupRecords, parseOrThrow, parseSnapshotRecords } from '@kioku/core/adapter';
import { type SnapshotSelector, SnapshotSelectorSchema } from '@kioku/core/store';

/** The user a snapshot selects, or undefined for `{ allUsers: true }`. */
export function selectedUser(selector: SnapshotSelector): { parsed: SnapshotSelector; userId?: string } {
  const parsed = parseOrThrow(SnapshotSelectorSchema, selector, 'snapshot selector');
  return 'userId' in parsed ? { parsed, userId: parsed.userId } : { parsed };
}

/** Core's checks of a snapshot before anything is written (envelope, records, the user restriction). */
export const parseSnapshot = parseSnapshotRecords;

/**
 * Records grouped by partition (`keyOf`) with core's rule (two records with one id in a partition are
 * refused), each group with its partition as `partitionOf` gives it.
 */
export function groupByPartition<R, K>(
  records: readonly R[],
  partitionOf: (record: R) => K,
  keyOf: (partition: K) => string,
  idOf: (record: R) => string,
): Array<{ partition: K; records: R[] }> {
  return groupRecords(records, (r) => keyOf(partitionOf(r)), idOf).map((group) => ({
    partition: partitionOf(group[0]!),
    records: group,
  }));
}
