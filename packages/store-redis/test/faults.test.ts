import { execFileSync } from 'node:child_process';
import { isKiokuError, type KiokuError } from '@kioku/core';
import { InMemoryFactStore } from '@kioku/core/store';
import { PrivateRedis } from '@kioku/private-servers';
import { expectKiokuError } from '@kioku/store-test-suite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRedisStores } from '../src/index.js';

/** redis-server must be installed; under CI a missing binary fails the run instead of skipping it. */
function hasRedisServer(): boolean {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    return true;
  } catch (error) {
    if (process.env.CI && !['0', 'false'].includes(process.env.CI.toLowerCase())) throw error;
    console.warn('\n[store-redis] redis-server is not installed: skipping the fault tests.\n');
    return false;
  }
}

/**
 * Retry `fn` until it succeeds (the client reconnects in the background); fail after `ms`, a hang detector
 * far above the second or so a reconnect takes even on a busy machine.
 */
async function eventually<T>(fn: () => Promise<T>, ms = 120_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

// Each test starts its own redis-server on a free port with AOF + fsync on every write, stops it
// mid-run (crash or SHUTDOWN) and starts it again on the same data directory. The shared 6379 is never
// touched.
describe.skipIf(!hasRedisServer())('Redis restarts mid-run (own redis-server, appendfsync always)', () => {
  let server: PrivateRedis;

  beforeEach(async () => {
    server = await PrivateRedis.start();
  });
  afterEach(async () => {
    await server.destroy();
  });

  for (const how of ['kill', 'shutdown'] as const) {
    it(`${how === 'kill' ? 'SIGKILL' : 'SHUTDOWN'}: outage → StorageError, reconnect → works, nothing acknowledged is lost`, async () => {
      const stores = createRedisStores({ url: server.url });
      const scope = { userId: 'alice', agentId: 'bot' };
      const thread = { ...scope, threadId: 't1' };
      try {
        // Acknowledged writes of every kind before the outage.
        const facts = [];
        for (let i = 0; i < 20; i++)
          facts.push(await stores.facts.create(scope, { content: `fact ${i} about tea` }));
        const session = await stores.sessions.create(scope);
        for (let i = 0; i < 10; i++) await stores.sessions.kvSet(scope, session.id, `k${i}`, `v${i}`);
        await stores.sessions.transcriptAppend(scope, session.id, [
          { role: 'user', content: 'hello' },
          { role: 'assistant', content: 'hi' },
        ]);
        await stores.working.set(scope, 'session/s1/notes', 'keep me', { ttlMs: 600_000 });
        await stores.plans.create(thread, { goal: 'Survive a restart', steps: ['write', 'crash', 'check'] });
        await stores.plans.updateStep(thread, '1', { status: 'completed' });
        const detail = await stores.details.create(scope, { description: 'log', content: 'tool output' });
        await stores.documents.create(scope, { id: 'doc', title: 'Guide', text: 'Crash recovery steps.' });
        expect((await stores.facts.search(scope, { query: 'tea' })).length).toBeGreaterThan(0); // warm cache

        // A writer that keeps going through the outage; only what it saw acknowledged must survive.
        const acknowledged: string[] = [];
        const failures: KiokuError[] = [];
        let writing = true;
        const writer = (async () => {
          for (let i = 0; writing; i++) {
            try {
              acknowledged.push((await stores.facts.create(scope, { content: `background ${i}` })).id);
              await new Promise((resolve) => setTimeout(resolve, 2));
            } catch (error) {
              if (!isKiokuError(error)) throw error;
              failures.push(error);
              await new Promise((resolve) => setTimeout(resolve, 20));
            }
          }
        })();
        // Some writes acknowledged before the outage (waited for, not assumed after a delay).
        while (acknowledged.length < 5) await new Promise((resolve) => setTimeout(resolve, 10));

        await server.stop(how);
        // During the outage: reads and writes of every kind fail fast with a typed StorageError. Fast is
        // counted in reconnection attempts, not milliseconds (a busy machine stretches those): each operation
        // fails at once or at the next failed attempt, where ioredis's default would wait for 20 of them.
        let reconnects = 0;
        const countReconnect = () => reconnects++;
        stores.connection.client.on('reconnecting', countReconnect);
        await expectKiokuError(stores.facts.list(scope), 'STORAGE');
        await expectKiokuError(stores.facts.create(scope, { content: 'during outage' }), 'STORAGE');
        await expectKiokuError(stores.sessions.kvSet(scope, session.id, 'k', 'v'), 'STORAGE');
        await expectKiokuError(stores.working.get(scope, 'session/s1/notes'), 'STORAGE');
        await expectKiokuError(stores.plans.get(thread), 'STORAGE');
        await expectKiokuError(stores.details.search(scope, { query: 'tool' }), 'STORAGE');
        stores.connection.client.off('reconnecting', countReconnect);
        expect(reconnects).toBeLessThanOrEqual(12); // six operations, at most two attempts each

        await server.start();
        // After reconnecting, operations succeed again without a new client.
        await eventually(() => stores.facts.list(scope));
        writing = false;
        await writer;
        expect(failures.length).toBeGreaterThan(0);
        expect(failures.every((e) => e.code === 'STORAGE')).toBe(true);

        // Everything acknowledged before (and around) the restart is there.
        const listed = new Set((await stores.facts.list(scope)).map((f) => f.id));
        for (const fact of facts) expect(listed.has(fact.id)).toBe(true);
        for (const id of acknowledged) expect(listed.has(id)).toBe(true);
        expect(acknowledged.length).toBeGreaterThan(0);
        expect((await stores.sessions.kvList(scope, session.id)).map((e) => e.key)).toEqual(
          Array.from({ length: 10 }, (_, i) => `k${i}`),
        );
        expect(
          (await stores.sessions.transcriptReadLast(scope, session.id, 10)).map((t) => t.content),
        ).toEqual(['hello', 'hi']);
        expect((await stores.working.get(scope, 'session/s1/notes'))?.value).toBe('keep me');
        expect((await stores.plans.get(thread))?.steps[0]?.status).toBe('completed');
        expect((await stores.details.get(scope, detail.id))?.content).toBe('tool output');
        expect((await stores.documents.search(scope, { query: 'crash recovery' }))[0]?.documentId).toBe(
          'doc',
        );
        // The search cache from before the restart agrees with the reloaded data: every background
        // fact is found (feedback expansion may add the older facts, which share numbers with them).
        const hits = new Set(
          (await stores.facts.search(scope, { query: 'background', limit: 1000 })).map((h) => h.fact.id),
        );
        for (const id of listed) if (!facts.some((f) => f.id === id)) expect(hits.has(id)).toBe(true);
        // And writes work again.
        await stores.sessions.kvSet(scope, session.id, 'after', 'restart');
        expect((await stores.sessions.kvGet(scope, session.id, 'after'))?.value).toBe('restart');
      } finally {
        await stores.close();
      }
    });
  }

  it('operations in flight when the connection drops all settle (done or StorageError), none hang', async () => {
    const stores = createRedisStores({ url: server.url });
    try {
      const scope = { userId: 'carol' };
      const session = await stores.sessions.create(scope);
      const inFlight = Array.from({ length: 300 }, (_, i) =>
        i % 2
          ? stores.sessions.transcriptAppend(scope, session.id, { role: 'user', content: `m${i}` })
          : stores.facts.create(scope, { content: `f${i}` }),
      );
      const all = Promise.allSettled(inFlight);
      await server.stop('kill');
      await server.start(); // back at once: ioredis reconnects on its first attempt
      // A hang fails the test at the shared test limit (vitest.shared.ts), not at a delay of its own.
      const outcomes = await all;
      for (const o of outcomes)
        if (o.status === 'rejected') expect(isKiokuError(o.reason, 'STORAGE')).toBe(true);
      // What was acknowledged is there, and no failed append was applied twice.
      const transcript = await eventually(() => stores.sessions.transcriptReadLast(scope, session.id, 1000));
      const contents = transcript.map((t) => t.content);
      expect(new Set(contents).size).toBe(contents.length);
      outcomes.forEach((o, i) => {
        if (i % 2 && o.status === 'fulfilled') expect(contents).toContain(`m${i}`);
      });
    } finally {
      await stores.close();
    }
  });

  it('an outage while a restore runs leaves all of the restore or none of it', async () => {
    const stores = createRedisStores({ url: server.url });
    try {
      const scope = { userId: 'bob' };
      for (let i = 0; i < 200; i++) await stores.facts.create(scope, { content: `old ${i}` });
      const source = new InMemoryFactStore();
      for (let i = 0; i < 2000; i++) await source.create(scope, { content: `new ${i} ${'x'.repeat(200)}` });
      const snapshot = await source.snapshot({ userId: 'bob' });
      const restoring = stores.facts.restore(snapshot).then(
        () => 'done',
        (error: unknown) => (isKiokuError(error, 'STORAGE') ? 'failed' : Promise.reject(error)),
      );
      await server.stop('kill');
      const outcome = await restoring;
      await server.start();
      const contents = (await eventually(() => stores.facts.list(scope))).map((f) => f.content);
      if (outcome === 'done') expect(contents).toHaveLength(2000);
      expect([200, 2000]).toContain(contents.length);
      expect(contents.every((c) => c.startsWith(contents.length === 200 ? 'old' : 'new'))).toBe(true);
    } finally {
      await stores.close();
    }
  });
});
