import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresStores } from '../src/index.js';
import { dropSchema, endSharedClient, freshSchema, noServer, pgUrl, sharedClient } from './helpers.js';

const run = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));

describe.skipIf(noServer)('PostgreSQL stores across OS processes', () => {
  afterAll(endSharedClient);

  it('two processes writing one user at once lose nothing, never exceed a cap, lose no compare-and-set and share one lease', async () => {
    const schema = freshSchema();
    const stores = createPostgresStores({ client: sharedClient(), schema });
    await stores.setup();
    const scope = { userId: 'shared-user' };
    const a = await stores.sessions.create(scope);
    const b = await stores.sessions.create(scope);
    const perProcess = 40;

    // Watch the capped rows through a side channel while the writers run.
    const sql = sharedClient();
    let maxKv = 0;
    let maxTranscript = 0;
    let maxWorking = 0;
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const [row] = await sql.unsafe(
          `select
             (select count(*) from "${schema}".session_kv where session_id = $1)::int as kv,
             (select count(*) from "${schema}".session_transcript where session_id = $1)::int as transcript,
             (select count(*) from "${schema}".working_entries where namespace = 'session/shared')::int as working`,
          [b.id],
        );
        maxKv = Math.max(maxKv, row!.kv);
        maxTranscript = Math.max(maxTranscript, row!.transcript);
        maxWorking = Math.max(maxWorking, row!.working);
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
          pgUrl,
          schema,
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

    // Facts and uncapped session data: every write of both processes is there.
    const facts = await stores.facts.list(scope);
    expect(facts).toHaveLength(2 * perProcess);
    expect(new Set(facts.map((f) => f.content)).size).toBe(2 * perProcess);
    // Every key of both processes, and the shared counter.
    expect(await stores.sessions.kvList(scope, a.id)).toHaveLength(2 * perProcess + 1);
    const transcript = await stores.sessions.transcriptReadLast(scope, a.id, 1000);
    expect(transcript).toHaveLength(2 * perProcess);
    for (const label of ['alpha', 'beta']) {
      const own = transcript.filter((t) => t.content.startsWith(label));
      expect(own).toHaveLength(perProcess);
    }

    // Capped data: exactly at the cap at the end, never above it at any moment we looked.
    expect(await stores.sessions.kvList(scope, b.id)).toHaveLength(25);
    const capped = await stores.sessions.transcriptReadLast(scope, b.id, 1000);
    expect(capped).toHaveLength(30);
    // Batches are never split: every question is followed by its answer (the first may have lost its question).
    for (let i = 1; i < capped.length; i++) {
      if (capped[i]!.role === 'assistant') {
        expect(capped[i - 1]!.content).toBe(capped[i]!.content.replace('answer', 'question'));
      }
    }
    expect(await stores.working.list(scope, 'session/shared')).toHaveLength(10);
    // Versions: no increment of the shared counter is lost.
    expect(await stores.working.get(scope, 'patrol/shared/counter')).toMatchObject({
      value: String(2 * perProcess),
      version: 2 * perProcess,
    });
    expect(await stores.sessions.kvGet(scope, a.id, 'shared-counter')).toMatchObject({
      value: String(2 * perProcess),
      version: 2 * perProcess,
    });
    expect(maxKv).toBeLessThanOrEqual(25);
    expect(maxTranscript).toBeLessThanOrEqual(30);
    expect(maxWorking).toBeLessThanOrEqual(10);
    await dropSchema(schema);
  });
});
