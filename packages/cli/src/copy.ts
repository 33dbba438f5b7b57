import { type RestoreReport, ScopeError, type SnapshotEnvelope, type SnapshotSelector } from '@kioku/core';
import type { Backend } from './backends.js';
import type { Bundle } from './bundle.js';
import type { Kind } from './kinds.js';
import { recordUserId } from './kinds.js';

export type Envelopes = Bundle['stores'];

export interface KindReport extends RestoreReport {
  kind: Kind;
}

/** Snapshot each kind from `source`. Reads only; every kind is read before anything is written anywhere. */
export async function snapshotKinds(
  source: Backend,
  kinds: readonly Kind[],
  selector: SnapshotSelector,
): Promise<Envelopes> {
  const envelopes: Envelopes = {};
  for (const kind of kinds) envelopes[kind] = await source.stores[kind].snapshot(selector);
  return envelopes;
}

export interface RestoreKindsOptions {
  /** Refuse (before writing anything) records of any other user. */
  userId?: string;
  /** Called after each kind is written, e.g. to print progress. */
  onKind?: (report: KindReport) => void;
}

/**
 * Restore envelopes into `target`, kind by kind, after `target.setup()`. Each restore replaces the
 * partitions (user + agent, or thread, session…) its snapshot contains and leaves every other partition
 * alone, so running the same copy twice gives the same result.
 */
export async function restoreKinds(
  target: Backend,
  envelopes: Envelopes,
  options: RestoreKindsOptions = {},
): Promise<KindReport[]> {
  const entries = Object.entries(envelopes) as [Kind, SnapshotEnvelope<unknown>][];
  if (options.userId !== undefined) {
    for (const [kind, envelope] of entries) {
      const foreign = envelope.records.find((r) => recordUserId(kind, r) !== options.userId);
      if (foreign) {
        throw new ScopeError(
          `The ${kind} snapshot holds records of user "${recordUserId(kind, foreign)}"; only "${options.userId}" may be restored. Nothing was written.`,
        );
      }
    }
  }
  await target.setup();
  const reports: KindReport[] = [];
  for (const [kind, envelope] of entries) {
    const report = { kind, ...(await target.stores[kind].restore(envelope, { userId: options.userId })) };
    reports.push(report);
    options.onKind?.(report);
  }
  return reports;
}
