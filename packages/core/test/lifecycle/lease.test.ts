import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConflictError, isKiokuError } from '../../src/index.js';
import { acquireLease, leaseKey, readLease, withLease } from '../../src/runtime/lease.js';
import { InMemoryWorkingMemoryStore } from '../../src/store/working/memory.js';
import { ManualClock } from '../../src/testing.js';

const scope = { userId: 'u1', agentId: 'bot' };
const TTL = 3000;

describe('withLease', () => {
  let clock: ManualClock;
  let working: InMemoryWorkingMemoryStore;

  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'] });
    clock = new ManualClock();
    working = new InMemoryWorkingMemoryStore({ clock });
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  /** Let `ms` pass for the store (its clock) and for the renewal timer alike. */
  const pass = async (ms: number) => {
    clock.advance(ms);
    await vi.advanceTimersByTimeAsync(ms);
  };

  /** Work that runs until `finish` is called, recording the signal it was given. */
  function pendingWork<T>(value: T) {
    let finish!: () => void;
    let signal: AbortSignal | undefined;
    const done = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const fn = async (s: AbortSignal) => {
      signal = s;
      await Promise.race([
        done,
        new Promise((_, reject) => s.addEventListener('abort', () => reject(s.reason), { once: true })),
      ]);
      return value;
    };
    return { fn, finish, signal: () => signal };
  }

  it('runs the work, renews the lease every third of its TTL while it runs, and releases it after', async () => {
    const work = pendingWork('dreamt');
    const outcome = withLease(working, scope, 'dream', work.fn, { ttlMs: TTL, holder: 'a', clock });
    await vi.advanceTimersByTimeAsync(0);
    expect(await readLease(working, scope, 'dream')).toMatchObject({ holder: 'a', version: 1 });
    // Four renewals carry it well past its first expiry.
    for (let i = 0; i < 4; i++) await pass(TTL / 3);
    expect(await readLease(working, scope, 'dream')).toMatchObject({ holder: 'a', version: 5 });
    expect(await acquireLease(working, scope, 'dream', { ttlMs: TTL, clock })).toBeNull();
    work.finish();
    expect(await outcome).toEqual({ status: 'done', value: 'dreamt' });
    expect(work.signal()?.aborted).toBe(false);
    expect(await readLease(working, scope, 'dream')).toBeNull();
  });

  it('answers busy, without running the work, while another holder has the lease', async () => {
    const held = await acquireLease(working, scope, 'dream', { ttlMs: TTL, holder: 'instance-1', clock });
    const fn = vi.fn();
    const outcome = await withLease(working, scope, 'dream', fn, { ttlMs: TTL, clock });
    expect(outcome).toEqual({ status: 'busy', holder: 'instance-1', expiresAt: held!.expiresAt });
    expect(fn).not.toHaveBeenCalled();
    expect(await readLease(working, scope, 'dream')).toMatchObject({ holder: 'instance-1' });
  });

  it('releases the lease when the work throws, and throws its error', async () => {
    const outcome = withLease(
      working,
      scope,
      'dream',
      async () => {
        throw new Error('model down');
      },
      { ttlMs: TTL, clock },
    );
    await expect(outcome).rejects.toThrow('model down');
    expect(await readLease(working, scope, 'dream')).toBeNull();
  });

  it('aborts the work when a renewal finds the lease taken, and never deletes the new holder’s lease', async () => {
    const work = pendingWork('late');
    const outcome = withLease(working, scope, 'dream', work.fn, { ttlMs: TTL, holder: 'a', clock });
    outcome.catch(() => undefined);
    await vi.advanceTimersByTimeAsync(0);
    // The lease expires without a renewal (the process stalled), and another instance takes it.
    clock.advance(TTL + 1);
    const b = await acquireLease(working, scope, 'dream', { ttlMs: TTL, holder: 'b', clock });
    expect(b).not.toBeNull();
    await vi.advanceTimersByTimeAsync(TTL / 3);
    expect(work.signal()?.aborted).toBe(true);
    const error = await outcome.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect(isKiokuError(error, 'CONFLICT') && error.details).toMatchObject({ lease: 'dream', holder: 'a' });
    expect(await readLease(working, scope, 'dream')).toMatchObject({ holder: 'b', version: 1 });
    expect(b!.held).toBe(true);
  });

  it('throws CONFLICT when the lease was lost even if the work ignored its signal', async () => {
    const outcome = withLease(
      working,
      scope,
      'dream',
      async () => {
        await working.delete(scope, leaseKey('dream')); // e.g. an operator cleared it
        await pass(TTL / 3);
        return 'done anyway';
      },
      { ttlMs: TTL, clock },
    );
    await expect(outcome).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('keeps the lease through a renewal that fails to reach the store, and renews at the next interval', async () => {
    const work = pendingWork('ok');
    const outcome = withLease(working, scope, 'dream', work.fn, { ttlMs: TTL, clock });
    await vi.advanceTimersByTimeAsync(0);
    const get = vi.spyOn(working, 'get').mockRejectedValueOnce(new Error('connection reset'));
    await pass(TTL / 3);
    expect(work.signal()?.aborted).toBe(false);
    get.mockRestore();
    await pass(TTL / 3);
    expect((await readLease(working, scope, 'dream'))?.version).toBe(2);
    work.finish();
    expect(await outcome).toEqual({ status: 'done', value: 'ok' });
  });

  it('forwards the caller’s abort to the work and still releases the lease', async () => {
    const work = pendingWork('never');
    const controller = new AbortController();
    const outcome = withLease(working, scope, 'dream', work.fn, {
      ttlMs: TTL,
      clock,
      signal: controller.signal,
    });
    await vi.advanceTimersByTimeAsync(0);
    controller.abort(new Error('shutting down'));
    await expect(outcome).rejects.toThrow('shutting down');
    expect(await readLease(working, scope, 'dream')).toBeNull();
  });

  it('refuses a renewal interval that is not shorter than the TTL', async () => {
    await expect(
      withLease(working, scope, 'dream', () => 1, { ttlMs: TTL, renewEveryMs: TTL }),
    ).rejects.toMatchObject({ code: 'VALIDATION' });
    expect(await readLease(working, scope, 'dream')).toBeNull();
  });
});
