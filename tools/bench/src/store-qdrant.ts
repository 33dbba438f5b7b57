/**
 * `@kioku/store-qdrant`'s vector index in the store bench, each operation timed beside the same REST
 * request made with the raw `@qdrant/js-client-rest` client (`RawQdrant` below), interleaved
 * (`src/store-interleave.ts`), on one shared client, in one collection `kioku_bench_<random>` per size
 * (deleted afterwards).
 *
 * The server: `QDRANT_URL` (and `QDRANT_API_KEY`) when set. Otherwise `@kioku/qdrant-test-server`, started
 * in a child process (its own heap and core): an in-memory stand-in that validates every request and
 * response against Qdrant's OpenAPI schema and answers queries by brute force. Its absolute figures
 * measure that server, not Qdrant; only the ratio — what the adapter adds on the client side (zod
 * validation of points and queries, point ids, payload mapping, scope filters, the scope re-check and the
 * record validation of every hit, error wrapping) — is meaningful then.
 *
 * Vectors: core's `HashingEmbedder` with 384 dimensions (a common sentence-model size) over the facts' texts;
 * query vectors are the embeddings of the 30 fixed queries. Points are what `withFactEmbeddings` writes:
 * kind `facts`, payload `{ id }`, the embedder's model id.
 *
 * Per size N, in one user's scope (no agent):
 * - prefill N − 2W points in requests of 256 (the adapter's batch size), alternately through the adapter's
 *   `upsert` and a raw upsert, each timed (the bulk figures in the notes);
 * - W one-point upserts through each, interleaved (the collection then holds N points);
 * - READS `count(scope)` through each (the adapter has no get by id; count is its read with the scope
 *   filter, exact);
 * - a warm-up, a check that both return the same points in the same order, then SEARCHES queries through
 *   each (limit 8, kind `facts`);
 * - a query right after a one-point upsert, rounds per side, only the query timed.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { HashingEmbedder, type Scope } from '@kioku/core';
import type { VectorHit, VectorPointInput } from '@kioku/core/store';
import type { QdrantClient } from '@qdrant/js-client-rest';
import { type FactSeed, QUERIES } from './facts.js';
import { type AdapterRow, clientCpu, figures, interleaved, perSecond } from './store-interleave.js';
import type { SqlOptions } from './store-sql.js';
import { round } from './util.js';

export type QdrantRow = AdapterRow<'qdrant'>;

const SCOPE: Scope = { userId: 'bench-user' };
const DIMENSIONS = 384;
/** Points per upsert request: the adapter's default batch size. */
const BATCH = 256;
const LIMIT = 8;
/**
 * The test server scans every point for each count and query (≈ 70 ms a query at 10k points, ten times that
 * at 100k), so against it the timed reads, queries and after-write rounds are capped to these.
 */
const TEST_SERVER_CAPS = { reads: 100, searches: 100, afterWrites: 20 };

type StoreQdrant = typeof import('@kioku/store-qdrant');

interface Server {
  url: string;
  /** The test server's violations at the end (always 0 with a real Qdrant). */
  stop(): Promise<{ violations: number; report: string }>;
  real: boolean;
}

// Run in the child: start the test server, hand its URL to the parent, stop on request. The server's
// request log keeps every body (every vector), so it is emptied every second.
const SERVER_SCRIPT = `
import { startQdrantTestServer } from '@kioku/qdrant-test-server';
const server = await startQdrantTestServer();
const timer = setInterval(() => { server.log.length = 0; }, 1000);
process.on('message', async (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  process.send({ violations: server.violations.length, report: server.report().slice(0, 4000) });
  await server.stop();
  process.disconnect();
});
process.send({ url: server.url });
`;

async function startServer(): Promise<Server | string> {
  const real = process.env.QDRANT_URL;
  if (real) return { url: real, real: true, stop: async () => ({ violations: 0, report: '' }) };
  // The child runs with this process's loader (tsx, --conditions) but without profiling flags.
  const execArgv = process.execArgv.filter((a) => !/^--(cpu-prof|heap-prof|inspect)/.test(a));
  const child = spawn(process.execPath, [...execArgv, '--input-type=module', '-e', SERVER_SCRIPT], {
    cwd: path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..'),
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const message = <T>() =>
    new Promise<T>((resolve, reject) => {
      child.once('message', (m) => resolve(m as T));
      child.once('exit', (code) => reject(new Error(`the Qdrant test server exited (${code})`)));
    });
  try {
    const { url } = await message<{ url: string }>();
    return {
      url,
      real: false,
      async stop() {
        const done = message<{ violations: number; report: string }>();
        child.send('stop');
        const result = await done.catch(() => ({ violations: -1, report: 'the test server did not answer' }));
        child.kill();
        return result;
      },
    };
  } catch (error) {
    child.kill();
    return (error as Error).message;
  }
}

interface Point {
  id: string;
  vector: number[];
}

/**
 * The adapter's requests made by hand with the raw client, with nothing else: the same point ids
 * (`pointId`, UUID v5 of scope + id, computed in the call as the adapter does), the same payload layout
 * and filters written as literals, `wait: true` upserts, an exact count, and the query with
 * `with_payload`, its hits mapped to `{ id, kind, score, payload, model }` without validation.
 */
class RawQdrant {
  readonly #scopeFilter = {
    must: [{ key: 'user_id', match: { value: SCOPE.userId } }, { is_empty: { key: 'agent_id' } }],
  };
  readonly #queryFilter = {
    must: [...this.#scopeFilter.must, { key: 'kind', match: { value: 'facts' } }],
  };

  constructor(
    readonly client: QdrantClient,
    readonly collection: string,
    readonly model: string,
    readonly pointId: StoreQdrant['pointId'],
  ) {}

  async upsert(points: readonly Point[]): Promise<void> {
    await this.client.upsert(this.collection, {
      wait: true,
      points: points.map((p) => ({
        id: this.pointId(SCOPE, p.id),
        vector: p.vector,
        payload: {
          kioku_id: p.id,
          kind: 'facts',
          user_id: SCOPE.userId,
          model: this.model,
          data: { id: p.id },
        },
      })),
    });
  }

  async count(): Promise<number> {
    return (await this.client.count(this.collection, { filter: this.#scopeFilter, exact: true })).count;
  }

  async query(vector: number[]): Promise<VectorHit[]> {
    const result = await this.client.query(this.collection, {
      query: vector,
      filter: this.#queryFilter,
      limit: LIMIT,
      with_payload: true,
    });
    return result.points.map((p) => {
      const payload = p.payload as Record<string, unknown>;
      return {
        id: payload.kioku_id as string,
        kind: payload.kind as string,
        score: p.score,
        payload: payload.data as Record<string, string>,
        model: payload.model as string,
      };
    });
  }
}

/** Every size against one server, one collection per size (deleted after it). */
export async function benchQdrant(
  sizes: readonly number[],
  seeds: readonly FactSeed[],
  options: SqlOptions,
): Promise<QdrantRow[] | string> {
  let mod: StoreQdrant;
  let Client: typeof QdrantClient;
  try {
    mod = await import('@kioku/store-qdrant');
    Client = (await import('@qdrant/js-client-rest')).QdrantClient;
  } catch (error) {
    return (error as Error).message.split('\n')[0] ?? 'import failed';
  }
  const server = await startServer();
  if (typeof server === 'string') return server;
  const apiKey = server.real ? process.env.QDRANT_API_KEY : undefined;
  const client = new Client({ url: server.url, ...(apiKey ? { apiKey } : {}) });
  const rows: QdrantRow[] = [];
  let collection: string | undefined;
  const onSignal = () => {
    void (collection ? client.deleteCollection(collection).catch(() => {}) : Promise.resolve())
      .then(() => server.stop())
      .finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    try {
      await client.versionInfo();
    } catch (error) {
      return `cannot reach Qdrant at ${server.url}: ${(error as Error).message}`;
    }
    for (const size of sizes) {
      collection = `kioku_bench_${randomBytes(4).toString('hex')}`;
      const index = new mod.QdrantVectorIndex({ client, collection, dimensions: DIMENSIONS });
      try {
        await index.setup();
        const capped = server.real
          ? options
          : {
              ...options,
              reads: Math.min(options.reads, TEST_SERVER_CAPS.reads),
              searches: Math.min(options.searches, TEST_SERVER_CAPS.searches),
              afterWrites: Math.min(options.afterWrites, TEST_SERVER_CAPS.afterWrites),
            };
        rows.push(await run(mod, index, client, size, seeds, capped, server));
      } finally {
        await client.deleteCollection(collection).catch(() => {});
        collection = undefined;
      }
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    const { violations, report } = await server.stop();
    if (!server.real) {
      const line = `  qdrant: the test server recorded ${violations} schema violation(s)`;
      if (violations !== 0) console.error(`${line}:\n${report}`);
      rows.at(-1)?.notes.push(`${line} during the run.`);
    }
  }
  return rows;
}

async function run(
  mod: StoreQdrant,
  index: import('@kioku/store-qdrant').QdrantVectorIndex,
  client: QdrantClient,
  size: number,
  seeds: readonly FactSeed[],
  options: SqlOptions,
  server: Server,
): Promise<QdrantRow> {
  const embedder = new HashingEmbedder({ dimensions: DIMENSIONS });
  const raw = new RawQdrant(client, index.collection, embedder.modelId, mod.pointId);
  const input = (p: Point): VectorPointInput => ({
    id: p.id,
    kind: 'facts',
    vector: p.vector,
    payload: { id: p.id },
    model: embedder.modelId,
  });
  const pointsOf = (from: number, to: number): Point[] =>
    seeds.slice(from, to).map((seed, j) => ({ id: `f${from + j}`, vector: embedder.embedOne(seed.content) }));
  const writes = Math.min(options.writes, Math.floor(size / 4));
  const prefill = size - 2 * writes;

  // Prefill: batches alternate between the adapter (even) and raw (odd), each timed; an odd last one is
  // the adapter's, untimed.
  const batches = Math.ceil(prefill / BATCH);
  const t0 = performance.now();
  const bulk = await interleaved(
    Math.floor(batches / 2),
    async (i, restart) => {
      const points = pointsOf(2 * i * BATCH, Math.min(prefill, (2 * i + 1) * BATCH)).map(input);
      restart();
      await index.upsert(SCOPE, points);
    },
    async (i, restart) => {
      const points = pointsOf((2 * i + 1) * BATCH, Math.min(prefill, (2 * i + 2) * BATCH));
      restart();
      await raw.upsert(points);
    },
  );
  if (batches % 2 === 1) await index.upsert(SCOPE, pointsOf((batches - 1) * BATCH, prefill).map(input));
  const prefillMs = performance.now() - t0;
  options.log(`  qdrant ${size}: prefilled ${prefill} points in ${(prefillMs / 1000).toFixed(1)} s`);
  const queries = QUERIES.map((q) => embedder.embedOne(q));

  const t1 = performance.now();
  await index.search(SCOPE, { vector: queries[0]!, limit: LIMIT, kind: 'facts' });
  const firstSearchMs = performance.now() - t1;

  // One-point upserts: seeds prefill.. alternate between the adapter (even) and raw (odd).
  const w = await interleaved(
    writes,
    async (i, restart) => {
      const [point] = pointsOf(prefill + 2 * i, prefill + 2 * i + 1);
      restart();
      await index.upsert(SCOPE, [input(point!)]);
    },
    async (i, restart) => {
      const points = pointsOf(prefill + 2 * i + 1, prefill + 2 * i + 2);
      restart();
      await raw.upsert(points);
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

  const query = (i: number) => queries[i % queries.length]!;
  for (const [i, text] of QUERIES.entries()) {
    const a = (await index.search(SCOPE, { vector: query(i), limit: LIMIT, kind: 'facts' })).map((h) => h.id);
    const b = (await raw.query(query(i))).map((h) => h.id);
    if (a.join() !== b.join())
      console.error(`  qdrant ${size}: raw query differs for "${text}": ${a} vs ${b}`);
  }
  const s = await interleaved(
    options.searches,
    (i) => index.search(SCOPE, { vector: query(i), limit: LIMIT, kind: 'facts' }),
    (i) => raw.query(query(i)),
  );
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
  options.log(`  qdrant ${size}: done`);
  const bulkAdapter = perSecond(bulk.adapter, BATCH);
  const bulkRaw = perSecond(bulk.raw, BATCH);
  // Client CPU per call (this process; the test server runs in its own): what the adapter itself costs.
  const cpu = clientCpu({ upsert_1: w, upsert_256: bulk, count: r, query: s });
  const details: Record<string, number> = {
    bulk_points_per_s: round(bulkAdapter, 0),
    raw_bulk_points_per_s: round(bulkRaw, 0),
    bulk_overhead_ratio: round(bulkRaw / bulkAdapter, 2),
  };
  Object.assign(details, cpu.details);
  return {
    adapter: 'qdrant',
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
        ? `qdrant: ${server.url.replace(/\/\/[^@]*@/, '//')}`
        : 'qdrant: NOT Qdrant — the schema-validating test server (tools/qdrant-test-server, child process, brute-force' +
          ' search): its absolute figures measure that server; only the adapter’s client-side cost is meaningful.',
      `  raw = the same REST requests on the same @qdrant/js-client-rest client; ${DIMENSIONS}-d HashingEmbedder vectors;` +
        ' writes = one-point upserts (wait), reads = count(scope) (exact), search = query, limit 8, kind facts' +
        (server.real
          ? '.'
          : `; ${options.reads} reads, ${options.searches} queries, ${options.afterWrites} after-write rounds per side.`),
      `  qdrant ${size}: bulk upsert (prefill, ${BATCH} points per request, ${bulk.adapter.length} requests per side):` +
        ` ${round(bulkAdapter, 0)} points/s, raw ${round(bulkRaw, 0)}, ×${round(bulkRaw / bulkAdapter, 2)}.`,
      `  qdrant ${size}: client CPU per call, µs (adapter / raw): ${cpu.line}.`,
    ],
  };
}
