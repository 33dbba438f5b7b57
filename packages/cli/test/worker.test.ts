import path from 'node:path';
import { KiokuBuilder, type KiokuStores } from '@kioku/core';
import { ExtractionOutbox, MEMORY_WORK_LEASE, readLease } from '@kioku/core/passes';
import { ScriptedModel } from '@kioku/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { openStores } from '../src/index.js';
import { saying, userOf } from './fixtures/sayings.js';
import { pgBackend, pgUrl, redisBackend, redisUrl, tempDir } from './helpers.js';
import { echoModelServer, eventually, type Running, startApp, startWorker } from './worker.harness.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function sqliteStore(): Promise<string> {
  const { dir, cleanup } = await tempDir();
  cleanups.push(cleanup);
  return `sqlite:${path.join(dir, 'kioku.db')}`;
}

async function open(spec: string): Promise<KiokuStores> {
  const stores = await openStores(spec);
  cleanups.push(() => stores.close());
  return stores;
}

/** Each user's facts are exactly what they said, once each; nothing is pending; no lease is held. */
async function expectAllExtractedOnce(
  stores: KiokuStores,
  users: number,
  turns: number,
  asked: Map<string, number>,
): Promise<void> {
  const outbox = new ExtractionOutbox({ stores, model: new ScriptedModel() });
  for (let u = 0; u < users; u++) {
    const scope = { userId: userOf(u) };
    const said = Array.from({ length: turns }, (_, t) => saying(u, t));
    const facts = await stores.facts.list(scope, { order: 'oldest' });
    expect(facts.map((f) => f.content).sort()).toEqual([...said].sort());
    for (const s of said) expect(asked.get(s), s).toBe(1);
    for (const session of await stores.sessions.list(scope)) {
      if (session.metadata.kioku === undefined) expect(await outbox.pending(scope, session.id)).toEqual([]);
    }
    expect(await readLease(stores.working, scope, MEMORY_WORK_LEASE)).toBeNull();
  }
  expect(await outbox.index.users()).toEqual([]);
}

/**
 * SIGTERM to each worker once it has said it started, and each exits 0. A worker the other one left no work
 * to may still be loading on a busy machine: a signal before its handler is installed kills it (exit null).
 */
async function stopWorkers(workers: Running[]): Promise<void> {
  for (const w of workers) await w.line(/ worker .* on /);
  for (const w of workers) w.child.kill('SIGTERM');
  for (const w of workers) expect(await w.exited, w.stderr()).toBe(0);
}

/** True when every user's every turn is extracted. */
async function allExtracted(stores: KiokuStores, users: number, turns: number): Promise<boolean> {
  for (let u = 0; u < users; u++) {
    if ((await stores.facts.count({ userId: userOf(u) })) < turns) return false;
  }
  return (await new ExtractionOutbox({ stores, model: new ScriptedModel() }).index.users()).length === 0;
}

const backends: [string, boolean, () => Promise<string>][] = [
  ['SQLite', true, sqliteStore],
  ['PostgreSQL', !!pgUrl, async () => pgBackend()],
  ['Redis', !!redisUrl, async () => redisBackend()],
];

describe('kioku worker', () => {
  for (const [name, available, storeOf] of backends) {
    it.skipIf(!available)(
      `extracts every turn exactly once after the app was killed before its extraction finished (${name})`,
      async () => {
        const spec = await storeOf();
        const { server, asked, env } = await echoModelServer();
        cleanups.push(server.close);
        const app = startApp(spec, 3, 3);
        cleanups.push(async () => void app.child.kill('SIGKILL'));
        await app.line(/all replied/);
        app.child.kill('SIGKILL');
        await app.exited;
        const stores = await open(spec);
        for (let u = 0; u < 3; u++) expect(await stores.facts.count({ userId: userOf(u) })).toBe(0);

        const worker = startWorker(spec, env);
        cleanups.push(async () => void worker.child.kill('SIGKILL'));
        await eventually('every turn extracted', () => allExtracted(stores, 3, 3));
        worker.child.kill('SIGTERM');
        expect(await worker.exited).toBe(0);
        expect(worker.stdout()).toMatch(/user00: 3 turns in 1 pass, 1 changeset applied/);
        expect(worker.stdout()).toMatch(/SIGTERM: finishing the pass under way[\s\S]*stopped\n$/);
        await expectAllExtractedOnce(stores, 3, 3, asked);
      },
    );
  }

  for (const [name, available, storeOf] of backends.slice(1)) {
    it.skipIf(!available)(`two workers share 50 users' work, each done once (${name})`, async () => {
      const spec = await storeOf();
      const stores = await open(spec);
      const app = new KiokuBuilder({ stores, model: new ScriptedModel() })
        .withExtraction({ trigger: { turns: 100, idleMs: false }, recover: false })
        .build();
      for (let u = 0; u < 50; u++) {
        const convo = await app.startConversation({ userId: userOf(u) });
        for (let t = 0; t < 2; t++) await convo.run(saying(u, t), new ScriptedModel(['Noted.']));
      }
      const { server, asked, env } = await echoModelServer();
      cleanups.push(server.close);
      const workers = [startWorker(spec, env), startWorker(spec, env)];
      for (const w of workers) cleanups.push(async () => void w.child.kill('SIGKILL'));
      await eventually('every turn extracted', () => allExtracted(stores, 50, 2));
      await stopWorkers(workers);
      for (const w of workers) expect(w.stdout()).toMatch(/stopped\n$/);
      await expectAllExtractedOnce(stores, 50, 2, asked);
    });
  }

  for (const [name, available, storeOf] of backends) {
    it.skipIf(!available)(
      `enriches save_memory's memories an app saved and never enriched, once each, per user (${name})`,
      async () => {
        const spec = await storeOf();
        const stores = await open(spec);
        // An app whose queue never runs a job: as if it stopped right after each reply.
        const app = new KiokuBuilder({
          stores,
          model: new ScriptedModel(),
          background: { guard: () => new Promise<never>(() => undefined) },
        })
          .withFacts({ mode: 'recall' })
          .build();
        for (let u = 0; u < 2; u++) {
          const convo = await app.startConversation({ userId: userOf(u) });
          const content = saying(u, 0);
          await convo.run(
            'remember this',
            new ScriptedModel([{ toolCalls: [{ name: 'save_memory', arguments: { content } }] }, 'Saved.']),
          );
        }
        const { server, enriched, env } = await echoModelServer();
        cleanups.push(server.close);
        const workers = [startWorker(spec, env), startWorker(spec, env)];
        for (const w of workers) cleanups.push(async () => void w.child.kill('SIGKILL'));
        const done = async () => {
          for (let u = 0; u < 2; u++) {
            const [fact] = await stores.facts.list({ userId: userOf(u) });
            if (fact?.category !== 'personal/enriched') return false;
          }
          return (
            (await new ExtractionOutbox({ stores, model: new ScriptedModel() }).index.users()).length === 0
          );
        };
        await eventually('every saved memory enriched', done);
        await stopWorkers(workers);
        for (let u = 0; u < 2; u++) {
          const facts = await stores.facts.list({ userId: userOf(u) });
          expect(facts.map((f) => [f.content, f.category, f.provenance.source])).toEqual([
            [saying(u, 0), 'personal/enriched', 'enrichment'],
          ]);
          expect(enriched.get(saying(u, 0))).toBe(1);
        }
      },
    );
  }
});
