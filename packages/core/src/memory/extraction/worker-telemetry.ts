import type { Scope } from '../../foundation/scope.js';
import type { SessionStore } from '../../store/sessions/store.js';
import { activeTelemetry, type Telemetry } from '../../telemetry/telemetry.js';
import { measureBacklog } from './backlog.js';
import type { ExtractionOutbox } from './outbox.js';

/** What the spans read of a user's report (`PendingUserReport`). */
interface UserOutcome {
  status: string;
  passes: number;
  turns: number;
  changesets: number;
}

/** What the spans read of a batch's report (`RunPendingReport`). */
interface BatchOutcome {
  users: readonly UserOutcome[];
  passes: number;
  complete: boolean;
}

/**
 * One worker batch (a `runPending` round): the span `kioku.worker.batch` over the users' spans, the outbox
 * backlog it found first (`kioku.outbox.pending_turns`, `.oldest_pending_age`), `kioku.worker.batches`
 * and each user's lease (`kioku.worker.leases`: acquired or busy).
 */
export function observeWorkerBatch<R extends BatchOutcome>(
  telemetry: Telemetry,
  outbox: ExtractionOutbox | undefined,
  sessions: SessionStore,
  now: () => number,
  run: () => Promise<R>,
): Promise<R> {
  return telemetry.span('kioku.worker.batch', {}, async (span) => {
    const backlog = outbox ? await measureBacklog(outbox, sessions).catch(() => undefined) : undefined;
    const instruments = telemetry.metrics;
    if (backlog) {
      const age = backlog.oldestAt === undefined ? 0 : Math.max(0, (now() - backlog.oldestAt) / 1000);
      instruments?.outboxPendingTurns.record(backlog.pendingTurns);
      instruments?.outboxOldestAge.record(age);
      span?.setAttributes({
        'kioku.outbox.pending_turns': backlog.pendingTurns,
        'kioku.outbox.oldest_pending_age': age,
      });
    }
    const report = await run();
    instruments?.workerBatches.add(1);
    for (const user of report.users) {
      instruments?.workerLeases.add(1, {
        'kioku.lease.outcome': user.status === 'busy' ? 'busy' : 'acquired',
      });
    }
    span?.setAttributes({
      'kioku.worker.users': report.users.length,
      'kioku.worker.passes': report.passes,
      'kioku.worker.complete': report.complete,
    });
    return report;
  });
}

/** One user's work in a batch: `kioku.worker.user`, with what was done (when telemetry is on). */
export function observeWorkerUser<U extends UserOutcome>(scope: Scope, run: () => Promise<U>): Promise<U> {
  const telemetry = activeTelemetry();
  if (!telemetry) return run();
  return telemetry.span('kioku.worker.user', telemetry.scope(scope), async (span) => {
    const user = await run();
    span?.setAttributes({
      'kioku.worker.status': user.status,
      'kioku.worker.passes': user.passes,
      'kioku.worker.turns': user.turns,
      'kioku.worker.changesets': user.changesets,
    });
    return user;
  });
}
