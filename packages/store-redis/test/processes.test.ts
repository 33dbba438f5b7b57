import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { createRedisStores } from '../src/index.js';
import { closeSharedClient, deletePrefix, freshPrefix, noServer, redisUrl, sharedClient } from './helpers.js';

const run = promisify(execFile);

type Counts = [[Error | null, number], [Error | null, number], [Error | null, number]];
const here = path.dirname(fileURLToPath(import.meta.url));

describe.skipIf(noServer)('Redis stores across OS processes', () => {
  afterAll(closeSharedClient);

  it('two processes writing one user at once lose nothing, never exceed a cap, lose no compare-and-set and share one lease', async () => {
    const prefix = freshPrefix();
    const stores = createRedisStores({ client: sharedClient(), prefix });
    const scope = { userId: 'shared-user' };
    const thread = { ...scope, threadId: 'shared-thread' };
    const a = await stores.sessions.create(scope);
    const b = await stores.sessions.create(scope);
    await stores.plans.create(thread, { goal: 'Collect notes from both processes' });
    const perProcess = 60;

    // Watch the capped structures through a side channel (raw commands) while the writers run.
    const redis = sharedClient();
    const sessionBase = `${prefix}sessions:{shared-user}:-:s:${b.id}`;
    const namespace = `${prefix}working:{shared-user}:-:ns:session%2Fshared`;
    let maxKv = 0;
    let maxTranscript = 0;
    let maxWorking = 0;
    let samples = 0;
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const [[, kv], [, transcript], [, working]] = (await redis
          .multi()
          .hlen(`${sessionBase}:kv`)
          .llen(`${sessionBase}:tr`)
          .zcard(namespace)
          .exec()) as Counts;
        maxKv = Math.max(maxKv, kv);
        maxTranscript = Math.max(maxTranscript, transcript);
        maxWorking = Math.max(maxWorking, working);
        samples++;
      }
    })();

    const writer = path.join(here, 'fixtures', 'writer.ts');
    const spawnWriter = (label: string) =>
      run(
        process.execPath,
        [
          '--conditions=@kioku/source',
          '--import',
          'tsx',
          writer,
          redisUrl,
          prefix,
          label,
          String(perProcess),
          a.id,
          b.id,
        ],
        { cwd: path.resolve(here, '..'), timeout: 240_000 }, // below the 300 s test limit: a hung child reports first,
      );
    const results = await Promise.all([spawnWriter('alpha'), spawnWriter('beta')]);
    watching = false;
    await watcher;
    const outputs = results.map((r) => r.stdout.trim().split('\n'));
    expect(outputs.map((lines) => lines.at(-1))).toEqual(['done', 'done']);
    // One lease, two processes: exactly one of them got it.
    expect(outputs.map((lines) => lines[0]).sort()).toEqual(['lease busy', 'lease held']);
    expect(samples).toBeGreaterThan(10);

    // Uncapped writes: every write of both processes is there.
    const facts = await stores.facts.list(scope);
    expect(facts).toHaveLength(2 * perProcess);
    expect(new Set(facts.map((f) => f.content)).size).toBe(2 * perProcess);
    // Every key of both processes, and the shared counter.
    expect(await stores.sessions.kvList(scope, a.id)).toHaveLength(2 * perProcess + 1);
    const transcriptA = await stores.sessions.transcriptReadLast(scope, a.id, 1000);
    expect(transcriptA).toHaveLength(2 * perProcess);
    const notes = (await stores.plans.get(thread))!.contextNotes;
    expect(notes).toHaveLength(2 * perProcess); // read-modify-writes: no update lost
    for (const label of ['alpha', 'beta']) {
      expect(transcriptA.filter((t) => t.content.startsWith(label))).toHaveLength(perProcess);
      expect(notes.filter((n) => n.text.startsWith(label))).toHaveLength(perProcess);
    }

    // Capped data: exactly at the cap at the end, never above it at any moment we looked.
    expect(await stores.sessions.kvList(scope, b.id)).toHaveLength(200);
    const transcriptB = await stores.sessions.transcriptReadLast(scope, b.id, 1000);
    expect(transcriptB).toHaveLength(500);
    for (let i = 0; i < transcriptB.length; i += 2) {
      expect(transcriptB[i]!.content.replace(' q', ' a')).toBe(transcriptB[i + 1]!.content); // batches unsplit
    }
    expect(await stores.working.list(scope, 'session/shared')).toHaveLength(50);
    // Versions: no compare-and-set increment of the shared counter is lost.
    expect(await stores.working.get(scope, 'patrol/shared/counter')).toMatchObject({
      value: String(2 * perProcess),
      version: 2 * perProcess,
    });
    expect(await stores.sessions.kvGet(scope, a.id, 'shared-counter')).toMatchObject({
      value: String(2 * perProcess),
      version: 2 * perProcess,
    });
    expect(maxKv).toBeLessThanOrEqual(200);
    expect(maxTranscript).toBeLessThanOrEqual(500);
    expect(maxWorking).toBeLessThanOrEqual(50);
    await deletePrefix(prefix);
  });
});
