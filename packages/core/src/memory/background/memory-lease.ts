import { ConflictError } from '../../foundation/errors.js';
import type { Scope } from '../../foundation/scope.js';
import { type WithLeaseOptions, withLease } from '../../runtime/lease.js';
import type { WorkingMemoryStore } from '../../store/working/store.js';
import type { BackgroundGuard } from './queue.js';

/*
 * Which leases Kioku's own background work takes, so that several app instances over one PostgreSQL or
 * Redis can all start it: versions already keep any write from overwriting another, and the leases keep
 * the work from being done twice at once (two extractions both adding one new fact, two dreams both
 * merging the same entries).
 */

/** Held while one user's memory is written by background work (extraction, enrichment, eviction, a dream). */
export const MEMORY_WORK_LEASE = 'memory-work';
/** Held for a whole dream: a second dream of the same user meanwhile answers busy rather than run again. */
export const DREAM_LEASE = 'dream';

export const MEMORY_LEASE_DEFAULTS = Object.freeze({
  /** A holder that crashed frees the lease after this long; a live one renews it every third of it. */
  ttlMs: 120_000,
  /** How long work waits for another instance's work on the same user before giving up. */
  waitMs: 300_000,
  /** How often a waiting instance tries again (with jitter). */
  pollMs: 500,
});

export interface WaitForLeaseOptions extends Partial<Pick<WithLeaseOptions, 'ttlMs' | 'holder' | 'clock'>> {
  waitMs?: number;
  pollMs?: number;
  signal?: AbortSignal;
}

/**
 * Run `fn` holding the lease `name` of the scope's user, waiting (up to `waitMs`) while another holder
 * has it. CONFLICT when the wait runs out, naming the holder.
 */
export async function waitForLease<T>(
  working: WorkingMemoryStore,
  scope: Scope,
  name: string,
  fn: (signal: AbortSignal) => Promise<T>,
  options: WaitForLeaseOptions = {},
): Promise<T> {
  const ttlMs = options.ttlMs ?? MEMORY_LEASE_DEFAULTS.ttlMs;
  const waitMs = options.waitMs ?? MEMORY_LEASE_DEFAULTS.waitMs;
  const pollMs = options.pollMs ?? MEMORY_LEASE_DEFAULTS.pollMs;
  const deadline = Date.now() + waitMs;
  for (;;) {
    options.signal?.throwIfAborted();
    const outcome = await withLease(working, scope, name, fn, {
      ttlMs,
      ...(options.holder ? { holder: options.holder } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (outcome.status === 'done') return outcome.value;
    if (Date.now() >= deadline) {
      throw new ConflictError(
        `Background memory work for user "${scope.userId}" waited ${waitMs} ms for the lease "${name}", held by ${outcome.holder ?? 'another instance'} until ${outcome.expiresAt ?? 'unknown'}; try again later.`,
        { details: { lease: name, holder: outcome.holder, expiresAt: outcome.expiresAt } },
      );
    }
    await sleep(pollMs / 2 + Math.random() * pollMs, options.signal);
  }
}

/**
 * The background queue's guard that makes its jobs safe across app instances: each job runs holding the
 * user's `memory-work` lease, waiting for it while another instance's job (or dream) has it.
 */
export function memoryWorkGuard(
  working: WorkingMemoryStore,
  options: WaitForLeaseOptions = {},
): BackgroundGuard {
  return (scope, run) => waitForLease(working, scope, MEMORY_WORK_LEASE, () => run(), options);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener('abort', aborted);
      resolve();
    }
    function aborted() {
      clearTimeout(timer);
      reject(signal?.reason);
    }
    signal?.addEventListener('abort', aborted, { once: true });
  });
}
