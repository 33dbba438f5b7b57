/**
 * The SQL fact store (`@kioku/store-postgres`) in the store bench, each operation
 * timed beside its raw-driver equivalent (`src/store-raw.ts`) on the same database, interleaved one call
 * each (alternating which goes first), so load from elsewhere on the machine hits both alike.
 *
 * Per size N, in one user's scope:
 * - prefill N − 2W facts through the store's bulk path (one `restore()` of a snapshot, then `VACUUM ANALYZE`,
 *   as autovacuum would have done);
 * - first search on the filled store (adapter);
 * - W `create`s through the adapter and W raw INSERTs, interleaved (the store then holds exactly N facts);
 * - READS `get`s by random id through each;
 * - a warm-up pass over the queries, a check that adapter and raw return the same facts in the same order,
 *   then SEARCHES searches through each, cycling through the fixed queries (limit 8).
 * Both also time the fact block's read per turn, `list({ order: 'updated', limit: 128 })` + `count()`,
 * beside the same two statements through the driver (`dynamicRead` in the row).
 */

import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Fact, Scope } from '@kioku/core';
import type { FactStore } from '@kioku/core/store';
import type PostgresClient from 'postgres';
import { type FactSeed, seedFact } from './facts.js';
import { type Layout, otherUsers, SEARCHED_USER, searchedShare } from './layout.js';
import { RawPostgresFacts } from './store-raw.js';
import type { DynamicRead, Figures, SqlAdapter, SqlRow } from './store-rows.js';
import { timeSignals } from './store-signals.js';
import { percentile, randomPicks, round } from './util.js';

export interface SqlOptions {
  searches: number;
  reads: number;
  /** Timed writes per side (adapter and raw), at most a quarter of the size. */
  writes: number;
  /** Rounds of write-then-search per side, after everything else (the store grows by 2 × this). */
  afterWrites: number;
  /** Progress lines (stderr). */
  log: (line: string) => void;
  /** What the searches cycle through (the corpus's queries, `src/corpus.ts`). */
  queries: readonly string[];
  /** How a size's records are spread over users (`src/layout.ts`); searches are in bench-user's scope. */
  layout: Layout;
}

const SCOPE: Scope = { userId: SEARCHED_USER };
/** Timed every-fact block reads per side. */
const DYNAMIC_READS = 300;

/** What one size's run needs from an adapter: the store, its raw twin, prefill and cleanup. */
interface Subject {
  store: FactStore;
  raw: {
    create(id: string, seed: FactSeed, now: string): unknown;
    get(id: string): unknown;
    search(query: string): unknown;
  };
  /** Writes one user's facts through the store's bulk path. */
  prefill(userId: string, facts: readonly Fact[]): Promise<void>;
  diskMb(): Promise<number>;
}

/** One timed call; it may call `restart()` to leave its preparation out of the time. */
type Timed = (i: number, restart: () => void) => unknown;

/**
 * `n` rounds, one call of each side per round, in an order a seeded coin decides (not strictly alternating:
 * FTS5 segment merges and WAL checkpoints come every 2^k writes, and would all land on the same side); each
 * side's timings in ms.
 */
async function interleaved(
  n: number,
  adapter: Timed,
  raw: Timed,
): Promise<{ adapter: number[]; raw: number[] }> {
  const times = { adapter: [] as number[], raw: [] as number[] };
  const once = async (fn: Timed, i: number, into: number[]) => {
    let start = performance.now();
    await fn(i, () => {
      start = performance.now();
    });
    into.push(performance.now() - start);
  };
  let coin = 0x9e3779b9;
  for (let i = 0; i < n; i++) {
    coin = (Math.imul(coin, 1103515245) + 12345) >>> 0;
    if (coin & 0x10000) {
      await once(adapter, i, times.adapter);
      await once(raw, i, times.raw);
    } else {
      await once(raw, i, times.raw);
      await once(adapter, i, times.adapter);
    }
  }
  return times;
}

const perSecond = (times: readonly number[]) => times.length / (times.reduce((a, b) => a + b, 0) / 1000);
const medianUs = (times: readonly number[]) =>
  round(
    percentile(
      [...times].sort((a, b) => a - b),
      50,
    ) * 1000,
    1,
  );

function searchFigures(times: number[]): Pick<Figures, 'searchP50' | 'searchP95' | 'searchMean'> {
  const sorted = [...times].sort((a, b) => a - b);
  return {
    searchP50: round(percentile(sorted, 50), 3),
    searchP95: round(percentile(sorted, 95), 3),
    searchMean: round(sorted.reduce((a, b) => a + b, 0) / sorted.length, 3),
  };
}

function afterWriteFigures(times: number[]): Pick<Figures, 'afterWriteP50' | 'afterWriteP95'> {
  const sorted = [...times].sort((a, b) => a - b);
  return { afterWriteP50: round(percentile(sorted, 50), 3), afterWriteP95: round(percentile(sorted, 95), 3) };
}

const idsOf = (hits: unknown): string =>
  (hits as Array<{ fact?: { id: string }; id?: string }>).map((h) => h.fact?.id ?? h.id).join(',');

async function run(
  adapter: SqlAdapter,
  subject: Subject,
  size: number,
  seeds: readonly FactSeed[],
  options: SqlOptions,
): Promise<SqlRow> {
  const { store, raw } = subject;
  const { queries } = options;
  const share = searchedShare(options.layout, size);
  const writes = Math.min(options.writes, Math.floor(share / 4));
  const prefill = share - 2 * writes;
  const now = new Date().toISOString();
  const t0 = performance.now();
  // The other users first (their records from the seeds after bench-user's), so bench-user's rows are newest.
  let next = share;
  for (const other of otherUsers(options.layout, size)) {
    const facts = Array.from({ length: other.records }, (_, i) =>
      seedFact(seeds[(next + i) % seeds.length]!, i, other.userId, now),
    );
    next += other.records;
    await subject.prefill(other.userId, facts);
  }
  await subject.prefill(
    SCOPE.userId,
    seeds.slice(0, prefill).map((seed, i) => seedFact(seed, i, SCOPE.userId, now)),
  );
  const prefillMs = performance.now() - t0;
  const spread =
    options.layout.users > 1
      ? ` (bench-user's ${prefill} of ${size - 2 * writes}, over ${options.layout.users} users)`
      : '';
  options.log(
    `  ${adapter} ${size}: prefilled ${size - 2 * writes} facts${spread} in ${(prefillMs / 1000).toFixed(1)} s`,
  );

  const t1 = performance.now();
  await store.search(SCOPE, { query: queries[0]! });
  const firstSearchMs = performance.now() - t1;

  // Writes: seeds prefill.. alternate between the adapter (even) and raw (odd), so together they fill to N.
  const ids = Array.from({ length: prefill }, (_, i) => `f${i}`);
  const w = await interleaved(
    writes,
    async (i) => {
      const k = prefill + 2 * i;
      await store.create(SCOPE, { id: `f${k}`, ...seeds[k]! });
    },
    (i) => {
      const k = prefill + 2 * i + 1;
      return raw.create(`f${k}`, seeds[k]!, new Date().toISOString());
    },
  );
  for (let k = prefill; k < prefill + 2 * writes; k++) ids.push(`f${k}`);

  // Reads: each side its own pseudo-random sequence of ids over the whole store.
  const nextA = randomPicks(ids, 7);
  const nextB = randomPicks(ids, 11);
  const r = await interleaved(
    options.reads,
    async () => {
      if (!(await store.get(SCOPE, nextA()))) throw new Error('adapter read missed');
    },
    async () => {
      if (!(await raw.get(nextB()))) throw new Error('raw read missed');
    },
  );

  // Searches: warm-up, same results check, then timed.
  for (const query of queries.slice(0, 30)) {
    const a = idsOf(await store.search(SCOPE, { query }));
    const b = idsOf(await raw.search(query));
    if (a !== b) console.error(`  ${adapter} ${size}: raw search differs for "${query}": ${a} vs ${b}`);
  }
  const s = await interleaved(
    options.searches,
    (i) => store.search(SCOPE, { query: queries[i % queries.length]! }),
    (i) => raw.search(queries[i % queries.length]!),
  );
  await timeSignals(adapter, size, store, SCOPE, queries, options.searches);
  // Last, a search right after each write: writes change what the store caches (PostgreSQL's pages), as they do in an application that stores facts between searches.
  const now2 = new Date().toISOString();
  const a = await interleaved(
    options.afterWrites,
    async (i, restart) => {
      await store.create(SCOPE, { id: `a${i}`, ...seeds[i % seeds.length]! });
      restart();
      await store.search(SCOPE, { query: queries[i % queries.length]! });
    },
    async (i, restart) => {
      await raw.create(`r${i}`, seeds[(i + 1) % seeds.length]!, now2);
      restart();
      await raw.search(queries[i % queries.length]!);
    },
  );
  const diskMb = round(await subject.diskMb(), 1);
  options.log(`  ${adapter} ${size}: done`);
  return {
    adapter,
    size,
    users: options.layout.users,
    writes,
    writesPerS: round(perSecond(w.adapter), 0),
    readsPerS: round(perSecond(r.adapter), 0),
    writeP50Us: medianUs(w.adapter),
    readP50Us: medianUs(r.adapter),
    ...searchFigures(s.adapter),
    ...afterWriteFigures(a.adapter),
    firstSearchMs: round(firstSearchMs, 1),
    prefillMs: round(prefillMs, 0),
    diskMb,
    raw: {
      writesPerS: round(perSecond(w.raw), 0),
      readsPerS: round(perSecond(r.raw), 0),
      writeP50Us: medianUs(w.raw),
      readP50Us: medianUs(r.raw),
      ...searchFigures(s.raw),
      ...afterWriteFigures(a.raw),
    },
  };
}

/**
 * What core's fact block (mode `all`) reads on every turn of a user with more facts than fit its block: the first page
 * newest-updated first, then the count (to report the facts never read). Checked equal, then timed.
 */
async function dynamicRead(
  adapter: SqlAdapter,
  store: FactStore,
  raw: { updatedPage(): unknown; count(): number | Promise<number> },
): Promise<DynamicRead> {
  const page = { order: 'updated', limit: 128 } as const;
  const facts = await store.count(SCOPE);
  if (
    idsOf(await store.list(SCOPE, page)) !== idsOf(await raw.updatedPage()) ||
    facts !== (await raw.count())
  )
    console.error(`  ${adapter}: raw every-fact block read differs`);
  const t = await interleaved(
    DYNAMIC_READS,
    async () => {
      await store.list(SCOPE, page);
      await store.count(SCOPE);
    },
    async () => {
      await raw.updatedPage();
      await raw.count();
    },
  );
  const sorted = (times: number[]) => [...times].sort((a, b) => a - b);
  const a = sorted(t.adapter);
  const r = sorted(t.raw);
  return {
    facts,
    p50: round(percentile(a, 50), 3),
    p95: round(percentile(a, 95), 3),
    rawP50: round(percentile(r, 50), 3),
    rawP95: round(percentile(r, 95), 3),
    ratio: round(percentile(a, 50) / percentile(r, 50), 2),
  };
}

/** Where the PostgreSQL bench connects to create its database (the role needs CREATEDB). */
export function postgresAdminUrl(): string {
  return (
    process.env.KIOKU_PG_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
  );
}

/**
 * The PostgreSQL store in a fresh database `kioku_bench_<random>` (dropped at the end, also on Ctrl-C),
 * one schema per size (dropped after it). The raw side has its own postgres.js client.
 */
export async function benchPostgres(
  sizes: readonly number[],
  seeds: readonly FactSeed[],
  options: SqlOptions,
): Promise<SqlRow[] | string> {
  let mod: typeof import('@kioku/store-postgres');
  let postgres: typeof PostgresClient;
  try {
    mod = await import('@kioku/store-postgres');
    postgres = (await import('postgres')).default;
  } catch (error) {
    return (error as Error).message.split('\n')[0] ?? 'import failed';
  }
  const adminUrl = postgresAdminUrl();
  const admin = postgres(adminUrl, { onnotice: () => {}, max: 1, connect_timeout: 5 });
  const name = `kioku_bench_${randomBytes(4).toString('hex')}`;
  try {
    await admin.unsafe(`create database ${name}`);
  } catch (error) {
    await admin.end({ timeout: 1 }).catch(() => {});
    return `cannot create a database at ${adminUrl.replace(/\/\/[^@]*@/, '//')}: ${(error as Error).message}`;
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const client = postgres(url.toString(), { onnotice: () => {}, max: 4 });
  const drop = async () => {
    await client.end({ timeout: 5 }).catch(() => {});
    await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
    await admin.end({ timeout: 5 }).catch(() => {});
  };
  const onSignal = () => {
    void drop().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const rows: SqlRow[] = [];
  try {
    for (const size of sizes) {
      const schema = `bench_${size}`;
      const store = new mod.PostgresFactStore({ url: url.toString(), schema, clientOptions: { max: 4 } });
      try {
        await store.setup();
        const table = `"${schema}".facts`;
        const raw = new RawPostgresFacts(client, schema, SCOPE.userId);
        const subject: Subject = {
          store,
          raw,
          async prefill(userId, facts) {
            await store.restore({
              format: 'kioku.snapshot',
              schemaVersion: 1,
              kind: 'facts',
              createdAt: new Date().toISOString(),
              selector: { userId },
              records: facts,
            });
            if (userId === SCOPE.userId) await client.unsafe(`vacuum analyze ${table}`);
          },
          async diskMb() {
            const [row] = await client.unsafe(`select pg_total_relation_size('${table}') as bytes`);
            return Number(row?.bytes ?? 0) / 1e6;
          },
        };
        const row = await run('postgres', subject, size, seeds, options);
        row.dynamicRead = await dynamicRead('postgres', store, raw);
        const d = row.dynamicRead;
        options.log(
          `  postgres ${size}: every-fact block read (list updated 128 + count of ${d.facts}) p50 ${d.p50} ms (raw ${d.rawP50}), p95 ${d.p95} ms (raw ${d.rawP95}), ×${d.ratio}`,
        );
        rows.push(row);
      } finally {
        await store.close();
        await client.unsafe(`drop schema if exists "${schema}" cascade`);
      }
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await drop();
  }
  return rows;
}
