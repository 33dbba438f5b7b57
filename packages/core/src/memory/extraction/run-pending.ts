import type { Clock } from '../../foundation/clock.js';
import { isKiokuError } from '../../foundation/errors.js';
import { parseScope, type Scope } from '../../foundation/scope.js';
import { withLease } from '../../runtime/lease.js';
import type { WorkingMemoryStore } from '../../store/working/store.js';
import { MEMORY_LEASE_DEFAULTS, MEMORY_WORK_LEASE } from '../background/memory-lease.js';
import type { DrainOptions, UserDrain } from './outbox.js';
import type { PendingIndex } from './pending-index.js';
import { observeWorkerUser } from './worker-telemetry.js';

/**
 * What `runPending` drains: an `ExtractionOutbox`, or `Kioku`'s every outbox (extraction and save_memory's
 * enrichment) behind one index.
 */
export interface PendingDrainer {
  /** Which users have work (read when `runPending` is given no `users`). */
  readonly index: PendingIndex;
  /** Do one user's work; the caller holds the user's `memory-work` lease. */
  drainUser(scope: Scope, options?: DrainOptions & { allSessions?: boolean }): Promise<UserDrain>;
}

export interface RunPendingOptions {
  /**
   * The users to do the work of (ids, or scopes to name an agent); each one's every conversation session is
   * checked. Default: every user the pending index lists, the longest waiting first.
   */
  users?: ReadonlyArray<string | Omit<Scope, 'threadId'>>;
  /** Limits of this run; what is left stays pending for the next. Default: until nothing is left. */
  budget?: {
    /** Extraction passes (each one or two model calls per turn read today, one per pass once batched). */
    passes?: number;
    /** No user is started after this many milliseconds (the one under way finishes its pass). */
    timeMs?: number;
  };
  /** A graceful stop: the pass under way finishes, its lease is released, nothing else starts. */
  stop?: AbortSignal;
  /** A hard stop: the pass under way is aborted (its turns stay pending). */
  signal?: AbortSignal;
  /** Who holds the leases taken, for logs and other instances' busy answers (default a random id). */
  holder?: string;
  /** The leases' TTL (default 120 s): how soon another instance takes over the users of one that died. */
  leaseTtlMs?: number;
  /** After each user: what was done, for progress output. */
  onUser?: (report: PendingUserReport) => void;
  clock?: Clock;
}

/** What a run did for one user (+ agent). */
export interface PendingUserReport {
  userId: string;
  agentId?: string;
  /**
   * `done`: nothing left; `partial`: the budget or a stop left turns pending; `busy`: another instance
   * holds the user's lease (it is doing the work); `failed`: a pass failed (its turns stay pending,
   * skipped after a few attempts); `error` says why.
   */
  status: 'done' | 'partial' | 'busy' | 'failed';
  passes: number;
  turns: number;
  /** Changesets applied. */
  changesets: number;
  /** Passes discarded because another pass over the same turns was first. */
  lost: number;
  /** Turns given up on after failing repeatedly. */
  skipped: number;
  error?: string;
}

export interface RunPendingReport {
  users: PendingUserReport[];
  passes: number;
  /** False when the budget or a stop ended the run with users not looked at or turns left. */
  complete: boolean;
}

/**
 * Do the background work waiting in the store (extraction of the turns past each session's watermark,
 * and save_memory's enrichment requests when `outbox` drains them), user by user, each under the user's `memory-work` lease: a user whose lease another
 * instance holds is skipped as `busy` (that instance is doing the work), so any number of instances can
 * run this at once and each user's work is done once. For an app's own cron or queue, and `kioku worker`.
 */
export async function runPending(
  outbox: PendingDrainer,
  working: WorkingMemoryStore,
  options: RunPendingOptions = {},
): Promise<RunPendingReport> {
  const started = Date.now();
  const named = options.users !== undefined;
  const users = named
    ? options.users!.map((u) => parseScope(typeof u === 'string' ? { userId: u } : u))
    : await outbox.index.users();
  const report: RunPendingReport = { users: [], passes: 0, complete: true };
  for (const scope of users) {
    const budget = (options.budget?.passes ?? Number.POSITIVE_INFINITY) - report.passes;
    const late = options.budget?.timeMs !== undefined && Date.now() - started >= options.budget.timeMs;
    if (budget <= 0 || late || options.stop?.aborted || options.signal?.aborted) {
      report.complete = false;
      break;
    }
    const user = await observeWorkerUser(scope, () =>
      runUser(outbox, working, scope, { ...options, maxPasses: budget, all: named }),
    );
    report.users.push(user);
    report.passes += user.passes + (user.status === 'failed' ? 1 : 0);
    if (user.status === 'partial') report.complete = false;
    try {
      options.onUser?.(user);
    } catch {
      // a progress listener's error never stops the work
    }
  }
  return report;
}

async function runUser(
  outbox: PendingDrainer,
  working: WorkingMemoryStore,
  scope: Scope,
  options: RunPendingOptions & { maxPasses: number; all: boolean },
): Promise<PendingUserReport> {
  const base: PendingUserReport = {
    userId: scope.userId,
    ...(scope.agentId !== undefined ? { agentId: scope.agentId } : {}),
    status: 'done',
    passes: 0,
    turns: 0,
    changesets: 0,
    lost: 0,
    skipped: 0,
  };
  try {
    const outcome = await withLease(
      working,
      scope,
      MEMORY_WORK_LEASE,
      (signal) =>
        outbox.drainUser(scope, {
          signal,
          maxPasses: options.maxPasses,
          allSessions: options.all,
          ...(options.stop ? { stop: options.stop } : {}),
        }),
      {
        ttlMs: options.leaseTtlMs ?? MEMORY_LEASE_DEFAULTS.ttlMs,
        ...(options.holder ? { holder: options.holder } : {}),
        ...(options.clock ? { clock: options.clock } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      },
    );
    if (outcome.status === 'busy') return { ...base, status: 'busy' };
    return summarize(base, outcome.value);
  } catch (error) {
    if (options.signal?.aborted && !isKiokuError(error)) throw error;
    return { ...base, status: 'failed', error: error instanceof Error ? error.message : String(error) };
  }
}

function summarize(base: PendingUserReport, drain: UserDrain): PendingUserReport {
  const out = { ...base };
  let error: unknown;
  for (const s of drain.sessions) {
    out.passes += s.passes;
    out.turns += s.turns;
    out.changesets += s.results.length;
    out.lost += s.lost;
    out.skipped += s.skipped;
    if (s.error !== undefined) error = s.error;
    if (s.left > 0 && out.status === 'done') out.status = 'partial';
  }
  if (error !== undefined) {
    out.status = 'failed';
    out.error = error instanceof Error ? error.message : String(error);
  }
  return out;
}
