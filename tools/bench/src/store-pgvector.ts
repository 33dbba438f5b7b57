/**
 * `@kioku/store-postgres`'s vector index (`PostgresVectorIndex`, pgvector HNSW, cosine) in the store bench,
 * each operation timed beside the same statements made with raw postgres.js (`RawPgvector` below),
 * interleaved (`src/store-interleave.ts`), on one shared client, in one schema `kioku_bench_<random>` per
 * size (dropped afterwards).
 *
 * The server: `KIOKU_PGVECTOR_URL` when set (a PostgreSQL with pgvector installed). Otherwise
 * `@kioku/pgvector-test-server` — PGlite (PostgreSQL 18 in WASM, single-threaded, one session) with
 * pgvector 0.8, served over the wire protocol — started in a child process (its own heap and core). Its
 * figures are PGlite's, not a server's: the ratio to raw and the recall are what carry over.
 *
 * Vectors: clustered, so that recall means something (uniform random vectors in high dimensions are all
 * about equally far apart): `CLUSTERS` seeded random centres, each point a centre plus Gaussian noise,
 * `DIMENSIONS` components. Queries are fresh points of the same clusters. Points are what
 * `withFactEmbeddings` writes: kind `facts`, payload `{ id }`, one model id.
 *
 * Per size N, in one user's scope (no agent), beside a second user with `SMALL_USER` points:
 * - prefill N − 2W points through the adapter's `upsert` in batches of 500 (timed: the bulk figure) with
 *   the HNSW index dropped, then build it once (`CREATE INDEX`, timed), as a bulk import would: inserting
 *   100k points one HNSW insertion at a time took PGlite about as many seconds as it has points / 110;
 * - W one-point upserts through each side, interleaved (the table then holds N points);
 * - READS `count(scope)` through each;
 * - RECALL@10 of the adapter's search, the raw statement and a bare `ORDER BY … LIMIT` (no settings)
 *   against brute force (exact cosine computed here over the user's vectors), on `RECALL_QUERIES` queries;
 * - SEARCHES through each (limit 10, kind `facts`), then the small user's searches through the adapter;
 * - a query right after a one-point upsert, rounds per side, only the query timed.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { Scope } from '@kioku/core';
import type { VectorPointInput } from '@kioku/core/store';
import type PostgresClient from 'postgres';
import type { Sql } from 'postgres';
import { type AdapterRow, clientCpu, figures, interleaved, perSecond } from './store-interleave.js';
import type { SqlOptions } from './store-sql.js';
import { percentile, round } from './util.js';
import { bruteForce, CLUSTERS, clusteredSpace, DIMENSIONS, unit } from './vector-space.js';

export type PgvectorRow = AdapterRow<'pgvector'>;

const SCOPE: Scope = { userId: 'bench-user' };
const SMALL: Scope = { userId: 'bench-small-user' };
const SMALL_USER = 200;
const LIMIT = 10;
const BATCH = 500;
const RECALL_QUERIES = 200;
const MODEL = 'bench-clustered-128';
/** The adapter's default `efSearch`: the raw statement uses the same. */
const EF_SEARCH = 100;
/**
 * PGlite runs one query at a time in WASM: a `count(*)` of 100k rows takes tens of ms there, so against it
 * the timed reads and after-write rounds are capped to these.
 */
const PGLITE_CAPS = { reads: 200, afterWrites: 30 };
/**
 * PGlite's socket serves one session: statements postgres.js pipelines or prepares by name meet each
 * other there (the connection was closed mid-search), so one query at a time, unnamed.
 */
const PGLITE_CLIENT = { prepare: false, max_pipeline: 1, fetch_types: false } as const;

type StorePostgres = typeof import('@kioku/store-postgres');

interface Server {
  url: string;
  real: boolean;
  stop(): Promise<void>;
}

// Run in the child: start PGlite + pgvector on a socket, hand its URL to the parent, stop on request.
const SERVER_SCRIPT = `
import { startPgvectorTestServer } from '@kioku/pgvector-test-server';
const server = await startPgvectorTestServer();
process.on('message', async (message) => {
  if (message !== 'stop') return;
  await server.stop();
  process.send('stopped');
  process.disconnect();
});
process.send({ url: server.url });
`;

async function startServer(): Promise<Server | string> {
  const real = process.env.KIOKU_PGVECTOR_URL;
  if (real) return { url: real, real: true, stop: async () => {} };
  const execArgv = process.execArgv.filter((a) => !/^--(cpu-prof|heap-prof|inspect)/.test(a));
  const child = spawn(process.execPath, [...execArgv, '--input-type=module', '-e', SERVER_SCRIPT], {
    cwd: path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..'),
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const message = <T>() =>
    new Promise<T>((resolve, reject) => {
      child.once('message', (m) => resolve(m as T));
      child.once('exit', (code) => reject(new Error(`the PGlite server exited (${code})`)));
    });
  try {
    const { url } = await message<{ url: string }>();
    return {
      url,
      real: false,
      async stop() {
        const done = message<unknown>().catch(() => undefined);
        child.send('stop');
        await Promise.race([done, new Promise((r) => setTimeout(r, 5000))]);
        child.kill();
      },
    };
  } catch (error) {
    child.kill();
    return (error as Error).message;
  }
}

const vectorText = (v: readonly number[]) => `[${v.join(',')}]`;

/**
 * The adapter's statements by hand with postgres.js and nothing else: the same table, a multi-row insert,
 * the count, and the search exactly as the adapter sends it (a transaction with `hnsw.ef_search` and
 * `hnsw.iterative_scan` set locally, a materialized CTE ordered again), its rows returned as they come.
 */
class RawPgvector {
  constructor(
    readonly sql: Sql,
    readonly table: string,
  ) {}

  async upsert(points: ReadonlyArray<{ id: string; vector: number[] }>): Promise<void> {
    const sql = this.sql;
    await sql`
      insert into ${sql(this.table)} (user_id, agent_id, id, kind, model, payload, embedding)
      select ${SCOPE.userId}, '', p.id, 'facts', ${MODEL}, jsonb_build_object('id', p.id), p.e::vector
      from unnest(${points.map((p) => p.id)}::text[], ${points.map((p) => vectorText(p.vector))}::text[]) as p(id, e)
      on conflict (user_id, agent_id, id) do update set embedding = excluded.embedding`;
  }

  async count(): Promise<number> {
    const [row] = await this
      .sql`select count(*)::int as n from ${this.sql(this.table)} where user_id = ${SCOPE.userId} and agent_id = ''`;
    return row!.n as number;
  }

  async query(vector: readonly number[]): Promise<Array<{ id: string }>> {
    const v = vectorText(vector);
    const results = await this.sql.begin((tx) => [
      tx`select set_config('hnsw.ef_search', ${String(EF_SEARCH)}, true)`,
      tx`select set_config('hnsw.iterative_scan', 'relaxed_order', true)`,
      tx`
        with hits as materialized (
          select id, kind, model, payload, embedding <=> ${v}::vector as distance
          from ${tx(this.table)} where user_id = ${SCOPE.userId} and agent_id = '' and kind = 'facts'
          order by distance limit ${LIMIT}
        )
        select id, kind, model, payload, 1 - distance as score from hits order by distance, id`,
    ]);
    return results.at(-1) as unknown as Array<{ id: string }>;
  }

  /** The plain pgvector query: no transaction, the server's default `hnsw.ef_search` (40), no iterative scan. */
  async bare(vector: readonly number[]): Promise<Array<{ id: string }>> {
    const v = vectorText(vector);
    return this.sql<{ id: string }[]>`
      select id from ${this.sql(this.table)} where user_id = ${SCOPE.userId} and agent_id = '' and kind = 'facts'
      order by embedding <=> ${v}::vector limit ${LIMIT}`;
  }
}

/** Every size against one server, one schema per size (dropped after it). */
export async function benchPgvector(
  sizes: readonly number[],
  options: SqlOptions,
): Promise<PgvectorRow[] | string> {
  let mod: StorePostgres;
  let postgres: typeof PostgresClient;
  try {
    mod = await import('@kioku/store-postgres');
    postgres = (await import('postgres')).default;
  } catch (error) {
    return (error as Error).message.split('\n')[0] ?? 'import failed';
  }
  const server = await startServer();
  if (typeof server === 'string') return server;
  // PGlite serves one query at a time and its socket server interleaves concurrent connections' messages.
  const sql = postgres(server.url, {
    max: server.real ? 4 : 1,
    onnotice: () => {},
    ...(server.real ? {} : PGLITE_CLIENT),
  });
  const rows: PgvectorRow[] = [];
  let schema: string | undefined;
  const dropSchema = async () => {
    if (schema) await sql.unsafe(`drop schema if exists "${schema}" cascade`).catch(() => {});
    schema = undefined;
  };
  const onSignal = () => {
    void dropSchema()
      .then(() => server.stop())
      .finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    try {
      await sql`select 1`;
    } catch (error) {
      return `cannot reach PostgreSQL at ${server.url}: ${(error as Error).message}`;
    }
    for (const size of sizes) {
      schema = `kioku_bench_${randomBytes(4).toString('hex')}`;
      const index = new mod.PostgresVectorIndex({ client: sql, schema, dimensions: DIMENSIONS });
      try {
        await index.setup();
        const capped = server.real
          ? options
          : {
              ...options,
              reads: Math.min(options.reads, PGLITE_CAPS.reads),
              afterWrites: Math.min(options.afterWrites, PGLITE_CAPS.afterWrites),
            };
        rows.push(await run(index, sql, size, capped, server));
      } finally {
        await dropSchema();
      }
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await sql.end({ timeout: 5 });
    await server.stop();
  }
  return rows;
}

async function run(
  index: import('@kioku/store-postgres').PostgresVectorIndex,
  sql: Sql,
  size: number,
  options: SqlOptions,
  server: Server,
): Promise<PgvectorRow> {
  const raw = new RawPgvector(sql, `${index.schema}.${index.table}`);
  const space = clusteredSpace(size);
  const vectors = new Map<string, Float64Array>();
  const make = (i: number, prefix = 'f') => {
    const vector = space.point(i);
    const id = `${prefix}${i}`;
    if (prefix === 'f') vectors.set(id, unit(vector));
    return { id, vector };
  };
  const input = (p: { id: string; vector: number[] }): VectorPointInput => ({
    id: p.id,
    kind: 'facts',
    vector: p.vector,
    payload: { id: p.id },
    model: MODEL,
  });
  const writes = Math.min(options.writes, Math.floor(size / 4));
  const prefill = size - 2 * writes;

  const hnsw = `"${index.schema}"."${index.table}_hnsw"`;
  const [{ indexdef } = { indexdef: '' }] = await sql<{ indexdef: string }[]>`
    select indexdef from pg_indexes where schemaname = ${index.schema} and indexname = ${`${index.table}_hnsw`}`;
  await sql.unsafe(`drop index ${hnsw}`);
  const t0 = performance.now();
  const bulk: number[] = [];
  for (let start = 0; start < prefill; start += BATCH) {
    const points = Array.from({ length: Math.min(BATCH, prefill - start) }, (_, j) => input(make(start + j)));
    const t = performance.now();
    await index.upsert(SCOPE, points);
    bulk.push(performance.now() - t);
    if ((start / BATCH) % 20 === 19)
      options.log(
        `  pgvector ${size}: ${start + BATCH} points (${((performance.now() - t0) / 1000).toFixed(0)} s)`,
      );
  }
  await index.upsert(
    SMALL,
    Array.from({ length: SMALL_USER }, (_, i) => input(make(i, 's'))),
  );
  const loadMs = performance.now() - t0;
  const tIndex = performance.now();
  await sql.begin(async (tx) => {
    await tx`select set_config('maintenance_work_mem', '512MB', true)`;
    await tx.unsafe(indexdef);
  });
  const indexMs = performance.now() - tIndex;
  const prefillMs = performance.now() - t0;
  options.log(
    `  pgvector ${size}: loaded ${prefill} points in ${(loadMs / 1000).toFixed(1)} s, built the HNSW index in ${(indexMs / 1000).toFixed(1)} s`,
  );
  await sql.unsafe(`analyze "${index.schema}"."${index.table}"`);

  const queries = Array.from({ length: Math.max(RECALL_QUERIES, 30) }, () => space.query());
  const t1 = performance.now();
  await index.search(SCOPE, { vector: queries[0]!, limit: LIMIT, kind: 'facts' });
  const firstSearchMs = performance.now() - t1;

  const w = await interleaved(
    writes,
    async (i, restart) => {
      const point = input(make(prefill + 2 * i));
      restart();
      await index.upsert(SCOPE, [point]);
    },
    async (i, restart) => {
      const point = make(prefill + 2 * i + 1);
      restart();
      await raw.upsert([point]);
    },
  );
  const r = await interleaved(
    options.reads,
    async () => {
      if ((await index.count(SCOPE)) !== size) throw new Error('adapter count is wrong');
    },
    async () => {
      if ((await raw.count()) !== size) throw new Error('raw count is wrong');
    },
  );

  // Recall@10 against brute force, for the adapter, the raw statement and the bare query.
  const recall = { adapter: 0, raw: 0, bare: 0 };
  for (const q of queries.slice(0, RECALL_QUERIES)) {
    const truth = new Set(bruteForce(vectors, q, LIMIT));
    const hit = (ids: string[]) => ids.filter((id) => truth.has(id)).length / LIMIT;
    recall.adapter += hit(
      (await index.search(SCOPE, { vector: q, limit: LIMIT, kind: 'facts' })).map((h) => h.id),
    );
    recall.raw += hit((await raw.query(q)).map((h) => h.id));
    recall.bare += hit((await raw.bare(q)).map((h) => h.id));
  }
  for (const k of ['adapter', 'raw', 'bare'] as const) recall[k] = round(recall[k] / RECALL_QUERIES, 3);

  const query = (i: number) => queries[i % queries.length]!;
  const s = await interleaved(
    options.searches,
    (i) => index.search(SCOPE, { vector: query(i), limit: LIMIT, kind: 'facts' }),
    (i) => raw.query(query(i)),
  );
  const bare: number[] = [];
  const small: number[] = [];
  let smallFull = 0;
  for (let i = 0; i < Math.min(options.searches, 200); i++) {
    let t = performance.now();
    await raw.bare(query(i));
    bare.push(performance.now() - t);
    t = performance.now();
    const hits = await index.search(SMALL, { vector: query(i), limit: LIMIT });
    small.push(performance.now() - t);
    if (hits.length === LIMIT) smallFull++;
  }
  const a = await interleaved(
    options.afterWrites,
    async (i, restart) => {
      await index.upsert(SCOPE, [input({ id: `a${i}`, vector: query(i + 1) })]);
      restart();
      await index.search(SCOPE, { vector: query(i), limit: LIMIT, kind: 'facts' });
    },
    async (i, restart) => {
      await raw.upsert([{ id: `r${i}`, vector: query(i + 2) }]);
      restart();
      await raw.query(query(i));
    },
  );
  options.log(`  pgvector ${size}: done`);
  const p = (times: number[], q: number) =>
    round(
      percentile(
        [...times].sort((x, y) => x - y),
        q,
      ),
      3,
    );
  const bulkPerS = perSecond(bulk, BATCH);
  const cpu = clientCpu({ upsert_1: w, count: r, query: s });
  const details: Record<string, number> = {
    recall_at_10: recall.adapter,
    raw_recall_at_10: recall.raw,
    bare_recall_at_10: recall.bare,
    bare_search_p50_ms: p(bare, 50),
    bare_search_p95_ms: p(bare, 95),
    small_user_search_p50_ms: p(small, 50),
    small_user_search_p95_ms: p(small, 95),
    small_user_full_ratio: round(smallFull / small.length, 3),
    bulk_points_per_s: round(bulkPerS, 0),
    hnsw_build_ms: round(indexMs, 0),
  };
  Object.assign(details, cpu.details);
  return {
    adapter: 'pgvector',
    size,
    writes,
    ...figures(w.adapter, r.adapter, s.adapter, a.adapter),
    firstSearchMs: round(firstSearchMs, 1),
    prefillMs: round(prefillMs, 0),
    diskMb: Number.NaN,
    raw: figures(w.raw, r.raw, s.raw, a.raw),
    details,
    notes: [
      server.real
        ? `pgvector: ${server.url.replace(/\/\/[^@]*@/, '//')}`
        : 'pgvector: PGlite (PostgreSQL 18 in WASM, one thread, one session) + pgvector 0.8 over the wire protocol,' +
          ' in a child process: these timings are PGlite’s, not a PostgreSQL server’s; the ratios and the recall carry over.',
      `  raw = the adapter's statements by hand on the same postgres.js client; ${DIMENSIONS}-d vectors in ${CLUSTERS} clusters;` +
        ' writes = one-point upserts, reads = count(scope), search = limit 10, kind facts (ef_search 100, iterative scan).',
      `  pgvector ${size}: recall@10 against brute force over ${RECALL_QUERIES} queries: adapter ${recall.adapter},` +
        ` raw ${recall.raw}, bare ORDER BY … LIMIT (ef_search 40, no transaction) ${recall.bare}` +
        ` (bare p50/p95 ${p(bare, 50)} / ${p(bare, 95)} ms).`,
      `  pgvector ${size}: a user with ${SMALL_USER} points in the same table: search p50/p95 ${p(small, 50)} / ${p(small, 95)} ms,` +
        ` ${smallFull}/${small.length} searches returned all ${LIMIT}.`,
      `  pgvector ${size}: bulk upsert (prefill, ${BATCH} points per statement, HNSW index dropped): ${round(bulkPerS, 0)} points/s;` +
        ` CREATE INDEX … USING hnsw afterwards ${round(indexMs / 1000, 1)} s (maintenance_work_mem 512MB).`,
      `  pgvector ${size}: client CPU per call, µs (adapter / raw): ${cpu.line}.`,
    ],
  };
}
