import { type Fact, ScopeError } from '@kioku/core';
import { SuppressionList } from '@kioku/core/passes';
import type { RestoreReport, SnapshotEnvelope, SnapshotSelector } from '@kioku/core/store';
import type { Backend } from './backends.js';
import type { Bundle } from './bundle.js';
import type { Kind } from './kinds.js';
import { recordUserId } from './kinds.js';

export type Envelopes = Bundle['stores'];

export interface KindReport extends RestoreReport {
  kind: Kind;
  /** Facts left out because their user forgot them (they are on the target's suppression list). */
  suppressed?: number;
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
  /** Called after each user's records of a kind are written. */
  onProgress?: (kind: Kind, written: number, total: number) => void;
}

/**
 * A kind's records split by user. No partition of any kind spans two users (some span a user's agents),
 * so each part holds whole partitions and restoring the parts one by one equals restoring the whole.
 */
function byUser(kind: Kind, records: readonly unknown[]): unknown[][] {
  const parts = new Map<string, unknown[]>();
  for (const record of records) {
    const key = recordUserId(kind, record);
    const part = parts.get(key);
    if (part) part.push(record);
    else parts.set(key, [record]);
  }
  return [...parts.values()];
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
  // What each user forgot stays forgotten: her suppressed facts are left out of the import, and her
  // suppression list is written back after it (the bundle's sessions may be older than the forgetting).
  const suppressions = new SuppressionList(target.stores.sessions);
  // Only restoring sessions can replace the list, so only their users' lists are kept aside.
  const users = new Set((envelopes.sessions?.records ?? []).map((r) => recordUserId('sessions', r)));
  const writeBack = await Promise.all([...users].map((user) => suppressions.preserve(user)));
  const forgotten = await forgottenFacts(suppressions, envelopes.facts?.records ?? []);
  const reports: KindReport[] = [];
  for (const [kind, envelope] of entries) {
    const report: KindReport = { kind, partitions: 0, records: 0 };
    const kept = kind === 'facts' ? envelope.records.filter((r) => !forgotten.has(r)) : envelope.records;
    if (kind === 'facts' && forgotten.size > 0) report.suppressed = forgotten.size;
    const parts = kept.length === 0 ? [[]] : byUser(kind, kept);
    for (const records of parts) {
      const part = await target.stores[kind].restore({ ...envelope, records }, { userId: options.userId });
      report.partitions += part.partitions;
      report.records += part.records;
      options.onProgress?.(kind, report.records, envelope.records.length);
    }
    reports.push(report);
    options.onKind?.(report);
  }
  for (const write of writeBack) await write();
  return reports;
}

/** The fact records of the bundle whose user has suppressed their content. */
async function forgottenFacts(
  suppressions: SuppressionList,
  records: readonly unknown[],
): Promise<Set<unknown>> {
  const out = new Set<unknown>();
  for (const part of byUser('facts', records)) {
    const facts = part as Fact[];
    const matched = await suppressions.matches(
      facts[0]!.userId,
      facts.map((f) => f.content),
    );
    facts.forEach((f, i) => {
      if (matched[i]) out.add(f);
    });
  }
  return out;
}
