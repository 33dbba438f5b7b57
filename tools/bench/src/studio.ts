/**
 * How fast Kioku Studio opens a heavy user: `--facts` facts (default 10,000) and `--sessions` sessions
 * (default 1,000, two transcript entries each) of one user beside 20 light users, on SQLite or PostgreSQL.
 * Each page is fetched over HTTP as a browser would (cookie, full body) `--runs` times after one warm-up;
 * the time is until the whole page has arrived.
 *
 *   pnpm bench:studio [--store sqlite|postgres] [--facts 10000] [--sessions 1000] [--runs 5] [--json]
 *
 * Pages read a page of records through the store contracts (facts by `list` with limit/offset and `count`,
 * sessions by `list`), never the whole store; this bench is where that shows.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { KiokuStores } from '@kioku/core';
import { SNAPSHOT_FORMAT, SNAPSHOT_SCHEMA_VERSION } from '@kioku/core/store';
import { createPostgresStores } from '@kioku/store-postgres';
import { createSqliteStores } from '@kioku/store-sqlite';
import { type DirectorySource, openDirectory, serveStudio } from '@kioku/studio';
import postgres from 'postgres';
import { cliArgs, flagValue, percentile, round, table } from './util.js';

const PG_URL = process.env.KIOKU_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const HEAVY = 'heavy';
const WORDS = 'tea coffee lisbon porto morning evening project deadline budget report meeting travel'.split(
  ' ',
);

function envelope(kind: 'facts' | 'sessions', userId: string, records: unknown[]) {
  return {
    format: SNAPSHOT_FORMAT,
    schemaVersion: SNAPSHOT_SCHEMA_VERSION,
    kind,
    createdAt: new Date().toISOString(),
    selector: { userId },
    records,
  };
}

/** One user's facts and sessions, written by restore (the fastest path every backend has). */
async function seedUser(stores: KiokuStores, userId: string, facts: number, sessions: number): Promise<void> {
  const start = Date.UTC(2025, 0, 1);
  const at = (i: number) => new Date(start + i * 60_000).toISOString();
  const factRecords = Array.from({ length: facts }, (_, i) => ({
    id: randomBytes(6).toString('hex'),
    userId,
    content: `Fact ${i}: ${WORDS[i % WORDS.length]} ${WORDS[(i * 7) % WORDS.length]} ${WORDS[(i * 5) % WORDS.length]}`,
    category: `topic-${i % 12}/sub-${i % 5}`,
    tags: [WORDS[i % WORDS.length]!],
    metadata: {},
    provenance: { source: 'user' },
    createdAt: at(i),
    updatedAt: at(i),
    version: 1,
  }));
  const sessionRecords = Array.from({ length: sessions }, (_, i) => ({
    session: {
      id: randomUUID(),
      userId,
      storeTypes: ['basic_session'],
      metadata: {},
      createdAt: at(i),
      title: `Chat ${i}`,
    },
    kv: [],
    transcript: [
      { role: 'user', content: `About ${WORDS[i % WORDS.length]}?`, ts: at(i) },
      { role: 'assistant', content: 'Noted.', ts: at(i) },
    ],
  }));
  await stores.facts.restore(envelope('facts', userId, factRecords), { userId });
  await stores.sessions.restore(envelope('sessions', userId, sessionRecords), { userId });
}

async function open(kind: string, dir: string, schema: string) {
  if (kind === 'postgres') {
    const stores = createPostgresStores({
      url: PG_URL,
      schema,
      clientOptions: { max: 4, onnotice: () => {} },
    });
    await stores.setup();
    const source: DirectorySource = { type: 'postgres', url: PG_URL, schema };
    return { stores, source };
  }
  const file = path.join(dir, 'kioku.db');
  const stores = createSqliteStores({ file });
  await stores.setup();
  return { stores, source: { type: 'sqlite', file } as DirectorySource };
}

async function main(): Promise<void> {
  const args = cliArgs();
  const kind = flagValue(args, '--store') ?? 'sqlite';
  if (kind !== 'sqlite' && kind !== 'postgres') throw new Error('--store is sqlite or postgres');
  const facts = Number(flagValue(args, '--facts') ?? 10_000);
  const sessions = Number(flagValue(args, '--sessions') ?? 1_000);
  const runs = Number(flagValue(args, '--runs') ?? 5);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kioku-bench-studio-'));
  const schema = `bench_studio_${randomBytes(4).toString('hex')}`;
  const { stores, source } = await open(kind, dir, schema);
  try {
    const seeding = performance.now();
    await seedUser(stores, HEAVY, facts, sessions);
    for (let u = 0; u < 20; u++) await seedUser(stores, `light-${u}`, 10, 2);
    console.error(`seeded in ${round((performance.now() - seeding) / 1000)} s`);
    const studio = await serveStudio({ stores, directory: await openDirectory(source), backend: kind });
    try {
      const cookie = `kioku-studio-${new URL(studio.origin).port}=${studio.token}`;
      const pages: [string, string][] = [
        ['users', '/'],
        ['user overview', `/users/${HEAVY}`],
        ['facts, page 1', `/users/${HEAVY}/facts`],
        ['facts, page 200', `/users/${HEAVY}/facts?page=200`],
        ['facts, one category', `/users/${HEAVY}/facts?category=topic-3`],
        ['sessions, page 1', `/users/${HEAVY}/sessions`],
        ['sessions, page 20', `/users/${HEAVY}/sessions?page=20`],
        ['plans, page 1', `/users/${HEAVY}/plans`],
        ['one session', ''],
        ['search', `/users/${HEAVY}/search?q=tea+morning`],
      ];
      const firstSession = (await stores.sessions.list({ userId: HEAVY })).at(-1)!.id;
      pages[8]![1] = `/users/${HEAVY}/sessions/${firstSession}`;
      const rows: { page: string; p50: number; max: number; bytes: number }[] = [];
      for (const [name, url] of pages) {
        const times: number[] = [];
        let bytes = 0;
        for (let i = 0; i <= runs; i++) {
          const t = performance.now();
          const response = await fetch(`${studio.origin}${url}`, { headers: { cookie } });
          const body = await response.text();
          if (response.status !== 200) throw new Error(`${url}: HTTP ${response.status}`);
          if (i > 0) times.push(performance.now() - t);
          bytes = body.length;
        }
        times.sort((a, b) => a - b);
        rows.push({ page: name, p50: round(percentile(times, 50)), max: round(times.at(-1)!), bytes });
      }
      console.log(
        `Kioku Studio on ${kind}: user "${HEAVY}" with ${facts.toLocaleString('en-US')} facts and ${sessions.toLocaleString('en-US')} sessions (+20 light users), ${runs} runs per page\n`,
      );
      console.log(
        table(
          ['page', 'p50 ms', 'max ms', 'KiB'],
          rows.map((r) => [r.page, r.p50, r.max, round(r.bytes / 1024)]),
        ),
      );
      const slowest = Math.max(...rows.map((r) => r.max));
      console.log(`\nslowest page, slowest run: ${slowest} ms (target: under 1000 ms)`);
      if (args.includes('--json'))
        console.log(
          JSON.stringify({
            bench: 'studio',
            store: kind,
            facts,
            sessions,
            runs,
            pages: rows,
            slowestMs: slowest,
          }),
        );
    } finally {
      await studio.close();
    }
  } finally {
    await stores.close();
    await rm(dir, { recursive: true, force: true });
    if (kind === 'postgres') {
      const sql = postgres(PG_URL, { max: 1, onnotice: () => {} });
      await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await sql.end();
    }
  }
}

await main();
