import { describe, expect, it } from 'vitest';
import { type BackgroundEvent, NotFoundError, type Scope } from '../../src/index.js';
import type { BackgroundJob } from '../../src/memory/background/queue.js';
import { BackgroundQueue } from '../../src/memory/background/queue.js';
import { alice, bob, gate } from './harness.js';

function recorder() {
  const events: BackgroundEvent[] = [];
  return { events, onEvent: (e: BackgroundEvent) => events.push(e) };
}

const job = (scope: Scope, run: BackgroundJob['run'], kind = 'test'): BackgroundJob => ({
  kind,
  scope,
  run,
});

describe('the background queue', () => {
  it('refuses a job beyond maxPending, reports it, and still runs the accepted ones', async () => {
    const { events, onEvent } = recorder();
    const queue = new BackgroundQueue({ maxPending: 2, onEvent });
    const hold = gate();
    const ran: string[] = [];
    const blocked = (name: string) =>
      job(alice, async () => {
        await hold.promise;
        ran.push(name);
        return undefined;
      });
    expect(queue.enqueue(blocked('a'))).toBe(true);
    expect(queue.enqueue(blocked('b'))).toBe(true);
    expect(queue.enqueue(blocked('c'))).toBe(false);
    expect(queue.pending).toBe(2);
    const refused = events.find((e) => e.type === 'refused');
    expect(refused).toMatchObject({ type: 'refused', reason: 'full', pending: 2, job: { userId: 'alice' } });
    hold.open();
    await queue.flush();
    expect(ran).toEqual(['a', 'b']);
    expect(queue.stats).toEqual({ queued: 2, done: 2, failed: 0, refused: 1 });
    // Room again once they are done.
    expect(queue.enqueue(job(alice, async () => undefined))).toBe(true);
    await queue.flush();
  });

  it('flush resolves when every job queued so far is done', async () => {
    const queue = new BackgroundQueue();
    const done: number[] = [];
    for (const i of [1, 2, 3]) {
      queue.enqueue(
        job(i % 2 ? alice : bob, async () => {
          await new Promise((r) => setTimeout(r, 5 * i));
          done.push(i);
          return undefined;
        }),
      );
    }
    await queue.flush();
    expect(done.sort()).toEqual([1, 2, 3]);
    expect(queue.pending).toBe(0);
  });

  it('runs one user’s jobs one at a time, in order, and other users’ beside them', async () => {
    const queue = new BackgroundQueue();
    const hold = gate();
    let running = 0;
    let most = 0;
    const order: string[] = [];
    const aliceJob = (name: string) =>
      job(alice, async () => {
        running++;
        most = Math.max(most, running);
        order.push(`start ${name}`);
        await hold.promise;
        order.push(`end ${name}`);
        running--;
        return undefined;
      });
    queue.enqueue(aliceJob('a1'));
    queue.enqueue(aliceJob('a2'));
    // Bob's job finishes while alice's first one is still held.
    const bobDone = gate();
    queue.enqueue(
      job(bob, async () => {
        bobDone.open();
        return undefined;
      }),
    );
    await bobDone.promise;
    expect(order).toEqual(['start a1']);
    hold.open();
    await queue.flush();
    expect(most).toBe(1);
    expect(order).toEqual(['start a1', 'end a1', 'start a2', 'end a2']);
  });

  it('reports a failing job with its code and runs the next one', async () => {
    const { events, onEvent } = recorder();
    const queue = new BackgroundQueue({ onEvent });
    queue.enqueue(
      job(
        alice,
        async () => {
          throw new NotFoundError('gone');
        },
        'first',
      ),
    );
    queue.enqueue(
      job(
        alice,
        async () => {
          throw new Error('boom');
        },
        'second',
      ),
    );
    queue.enqueue(job(alice, async () => undefined, 'third'));
    await queue.flush();
    const outcomes = events
      .filter((e) => e.type === 'failed' || e.type === 'done')
      .map((e) => [e.job.kind, e.type, e.type === 'failed' ? e.code : '']);
    expect(outcomes).toEqual([
      ['first', 'failed', 'NOT_FOUND'],
      ['second', 'failed', 'INTERNAL'],
      ['third', 'done', ''],
    ]);
  });

  it('a listener that throws changes nothing', async () => {
    const queue = new BackgroundQueue({
      onEvent: () => {
        throw new Error('listener bug');
      },
    });
    let ran = false;
    expect(
      queue.enqueue(
        job(alice, async () => {
          ran = true;
          return undefined;
        }),
      ),
    ).toBe(true);
    await queue.flush();
    expect(ran).toBe(true);
  });

  it('close takes no more jobs (reported) and waits for the accepted ones', async () => {
    const { events, onEvent } = recorder();
    const queue = new BackgroundQueue({ onEvent });
    const hold = gate();
    let finished = false;
    queue.enqueue(
      job(alice, async () => {
        await hold.promise;
        finished = true;
        return undefined;
      }),
    );
    const closing = queue.close();
    expect(queue.enqueue(job(alice, async () => undefined))).toBe(false);
    expect(events.at(-1)).toMatchObject({ type: 'refused', reason: 'closed' });
    hold.open();
    await closing;
    expect(finished).toBe(true);
  });

  it('close with an aborted signal stops at once: the running job sees the abort, the queued one never runs', async () => {
    const { events, onEvent } = recorder();
    const queue = new BackgroundQueue({ onEvent });
    const started = gate();
    let sawAbort = false;
    queue.enqueue(
      job(
        alice,
        (signal) =>
          new Promise((_resolve, reject) => {
            started.open();
            signal.addEventListener('abort', () => {
              sawAbort = true;
              reject(signal.reason);
            });
          }),
        'running',
      ),
    );
    let queuedRan = false;
    queue.enqueue(
      job(
        alice,
        async () => {
          queuedRan = true;
          return undefined;
        },
        'queued',
      ),
    );
    await started.promise;
    const stop = new AbortController();
    const closing = queue.close({ signal: stop.signal });
    stop.abort();
    await closing;
    expect(sawAbort).toBe(true);
    await queue.flush();
    expect(queuedRan).toBe(false);
    const failed = events.filter((e) => e.type === 'failed').map((e) => [e.job.kind, e.code]);
    expect(failed).toEqual([
      ['running', 'ABORTED'],
      ['queued', 'ABORTED'],
    ]);
  });

  it('runs every job through the guard with its scope; a guard that throws fails the job', async () => {
    const { events, onEvent } = recorder();
    const guarded: string[] = [];
    const queue = new BackgroundQueue({
      onEvent,
      guard: async (scope, run) => {
        guarded.push(scope.userId);
        if (scope.userId === 'bob') throw new Error('lease held by another instance');
        return run();
      },
    });
    let aliceRan = false;
    let bobRan = false;
    queue.enqueue(
      job(alice, async () => {
        aliceRan = true;
        return undefined;
      }),
    );
    queue.enqueue(
      job(bob, async () => {
        bobRan = true;
        return undefined;
      }),
    );
    await queue.flush();
    expect(guarded.sort()).toEqual(['alice', 'bob']);
    expect([aliceRan, bobRan]).toEqual([true, false]);
    expect(events.find((e) => e.type === 'failed')).toMatchObject({
      job: { userId: 'bob' },
      message: 'lease held by another instance',
    });
  });
});
