/**
 * `@kioku/store-sqlite`'s vector index (`SqliteVectorIndex`: sqlite-vec's `vec0`, partitioned by user +
 * agent, exact k-NN) in the store bench, each operation timed beside the same statements made with
 * better-sqlite3 directly (`RawSqliteVec` below), interleaved (`src/store-interleave.ts`), on one database
 * file per size. The vectors and queries are pgvector's (`src/vector-space.ts`), so the two rows compare.
 *
 * Per size N, in one user's scope (no agent), beside a second user with `SMALL_USER` points:
 * - prefill N − 2W points through the adapter's `upsert` in batches of 500 (the bulk figure);
 * - OPEN: a new index on the file (a new connection, sqlite-vec loaded, the tables checked) and its first
 *   search, against what an in-memory index costs at every start (what SQLite had before it): every vector
 *   upserted into core's `InMemoryVectorIndex` again — the floor, with the vectors already computed — and,
 *   since those vectors are not stored anywhere, the embedder's time for N texts, from the throughput of
 *   `@kioku/embed-local` measured on `EMBED_SAMPLE` LoCoMo-length texts;
 * - W one-point upserts through each side, interleaved; READS `count(scope)` through each;
 * - RECALL@10 of the adapter's search against brute force (exact cosine computed here);
 * - SEARCHES through each (limit 10, kind `facts`), then the small user's searches through the adapter;
 * - a query right after a one-point upsert, rounds per side, only the query timed.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Scope } from '@kioku/core';
import { InMemoryVectorIndex, type VectorPointInput } from '@kioku/core/store';
import Database from 'better-sqlite3';
import { getLoadablePath } from 'sqlite-vec';
import { type AdapterRow, clientCpu, figures, interleaved, perSecond } from './store-interleave.js';
import type { SqlOptions } from './store-sql.js';
import { percentile, round } from './util.js';
import { bruteForce, CLUSTERS, clusteredSpace, DIMENSIONS, unit } from './vector-space.js';

export type SqliteVecRow = AdapterRow<'sqlite-vec'>;

const SCOPE: Scope = { userId: 'bench-user' };
const SMALL: Scope = { userId: 'bench-small-user' };
const SMALL_USER = 200;
const LIMIT = 10;
const BATCH = 500;
const RECALL_QUERIES = 200;
const EMBED_SAMPLE = 256;
const MODEL = 'bench-clustered-128';

type StoreSqlite = typeof import('@kioku/store-sqlite');

const float32 = (v: readonly number[]) => Buffer.from(Float32Array.from(v).buffer);

/**
 * The adapter's statements by hand with better-sqlite3 and nothing else: the same tables (set up by the
 * adapter), a point's two rows in one transaction, the count, and the search as the adapter sends it (the
 * vec0 k-NN in the user's partition and kind, then the hits' rows).
 */
class RawSqliteVec {
  readonly #db: Database.Database;
  readonly #find: Database.Statement;
  readonly #insertPoint: Database.Statement;
  readonly #updatePoint: Database.Statement;
  readonly #insertVector: Database.Statement;
  readonly #updateVector: Database.Statement;
  readonly #count: Database.Statement;
  readonly #knn: Database.Statement;
  readonly #rows: Database.Statement;

  constructor(db: Database.Database) {
    this.#db = db;
    this.#find = db.prepare(
      'SELECT rid FROM kioku_vectors_points WHERE user_id = ? AND agent_id = ? AND id = ?',
    );
    this.#insertPoint = db.prepare(
      'INSERT INTO kioku_vectors_points (user_id, agent_id, id, kind, model, payload, zero) VALUES (?, ?, ?, ?, ?, ?, 0)',
    );
    this.#updatePoint = db.prepare(
      'UPDATE kioku_vectors_points SET kind = ?, model = ?, payload = ? WHERE rid = ?',
    );
    this.#insertVector = db.prepare(
      'INSERT INTO kioku_vectors (rowid, partition, kind, embedding) VALUES (?, ?, ?, ?)',
    );
    this.#updateVector = db.prepare('UPDATE kioku_vectors SET kind = ?, embedding = ? WHERE rowid = ?');
    this.#count = db
      .prepare("SELECT count(*) FROM kioku_vectors_points WHERE user_id = ? AND agent_id = ''")
      .pluck();
    this.#knn = db.prepare(
      "SELECT rowid AS rid, distance FROM kioku_vectors WHERE embedding MATCH ? AND k = ? AND partition = ? AND kind = 'facts'",
    );
    this.#rows = db.prepare(
      'SELECT rid, id, kind, model, payload FROM kioku_vectors_points WHERE rid IN (SELECT value FROM json_each(?))',
    );
  }

  upsert(point: { id: string; vector: number[] }): void {
    this.#db
      .transaction(() => {
        const payload = JSON.stringify({ id: point.id });
        const found = this.#find.get(SCOPE.userId, '', point.id) as { rid: number } | undefined;
        if (found) {
          this.#updatePoint.run('facts', MODEL, payload, found.rid);
          this.#updateVector.run('facts', float32(point.vector), BigInt(found.rid));
          return;
        }
        const { lastInsertRowid } = this.#insertPoint.run(
          SCOPE.userId,
          '',
          point.id,
          'facts',
          MODEL,
          payload,
        );
        this.#insertVector.run(BigInt(lastInsertRowid), `${SCOPE.userId}/`, 'facts', float32(point.vector));
      })
      .immediate();
  }

  count(): number {
    return this.#count.get(SCOPE.userId) as number;
  }

  query(vector: readonly number[]): Array<{ id: string }> {
    return this.#db.transaction(() => {
      const near = this.#knn.all(float32(vector), LIMIT, `${SCOPE.userId}/`) as Array<{
        rid: number;
        distance: number;
      }>;
      const rows = this.#rows.all(JSON.stringify(near.map((n) => n.rid))) as Array<{
        rid: number;
        id: string;
      }>;
      const byRid = new Map(rows.map((row) => [row.rid, row]));
      return near.map((n) => ({ id: byRid.get(n.rid)!.id, score: 1 - n.distance }));
    })();
  }
}

/** Texts per second of `@kioku/embed-local` on LoCoMo-length texts, or why it cannot say. */
async function embedLocalRate(texts: readonly string[]): Promise<number | string> {
  try {
    const { SentenceEncoderEmbedder } = await import('@kioku/embed-local');
    const embedder = new SentenceEncoderEmbedder();
    await embedder.embed(texts.slice(0, 8)); // loads the model
    const t0 = performance.now();
    for (let i = 0; i < texts.length; i += embedder.maxBatchSize) {
      await embedder.embed(texts.slice(i, i + embedder.maxBatchSize));
    }
    return texts.length / ((performance.now() - t0) / 1000);
  } catch (error) {
    return (error as Error).message.split('\n')[0] ?? 'failed';
  }
}

export async function benchSqliteVec(
  sizes: readonly number[],
  options: SqlOptions,
): Promise<SqliteVecRow[] | string> {
  let mod: StoreSqlite;
  try {
    mod = await import('@kioku/store-sqlite');
  } catch (error) {
    return (error as Error).message.split('\n')[0] ?? 'import failed';
  }
  const texts = options.queries.length > 0 ? options.queries : ['a sentence'];
  const sample = Array.from({ length: EMBED_SAMPLE }, (_, i) => texts[i % texts.length]!);
  const rate = await embedLocalRate(sample);
  const rows: SqliteVecRow[] = [];
  for (const size of sizes) {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'kioku-bench-sqlite-vec-'));
    try {
      rows.push(await run(mod, path.join(directory, 'bench.db'), size, options, rate));
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  }
  return rows;
}

async function run(
  mod: StoreSqlite,
  file: string,
  size: number,
  options: SqlOptions,
  embedRate: number | string,
): Promise<SqliteVecRow> {
  const space = clusteredSpace(size);
  const vectors = new Map<string, Float64Array>();
  const all: VectorPointInput[] = [];
  const make = (i: number, prefix = 'f') => {
    const vector = space.point(i);
    const id = `${prefix}${i}`;
    if (prefix === 'f') vectors.set(id, unit(vector));
    return { id, vector };
  };
  const input = (p: { id: string; vector: number[] }): VectorPointInput => {
    const point = { id: p.id, kind: 'facts', vector: p.vector, payload: { id: p.id }, model: MODEL };
    all.push(point);
    return point;
  };
  const writes = Math.min(options.writes, Math.floor(size / 4));
  const prefill = size - 2 * writes;

  const filler = new mod.SqliteVectorIndex({ file, dimensions: DIMENSIONS });
  await filler.setup();
  const t0 = performance.now();
  const bulk: number[] = [];
  for (let start = 0; start < prefill; start += BATCH) {
    const points = Array.from({ length: Math.min(BATCH, prefill - start) }, (_, j) => input(make(start + j)));
    const t = performance.now();
    await filler.upsert(SCOPE, points);
    bulk.push(performance.now() - t);
    if ((start / BATCH) % 40 === 39)
      options.log(
        `  sqlite-vec ${size}: ${start + BATCH} points (${((performance.now() - t0) / 1000).toFixed(0)} s)`,
      );
  }
  await filler.upsert(
    SMALL,
    Array.from({ length: SMALL_USER }, (_, i) => input(make(i, 's'))),
  );
  const prefillMs = performance.now() - t0;
  await filler.close();
  options.log(`  sqlite-vec ${size}: loaded ${prefill} points in ${(prefillMs / 1000).toFixed(1)} s`);

  const queries = Array.from({ length: Math.max(RECALL_QUERIES, 30) }, () => space.query());
  // A start: a new connection to the file and its first search. Then an in-memory index's start.
  const t1 = performance.now();
  const index = new mod.SqliteVectorIndex({ file, dimensions: DIMENSIONS });
  await index.search(SCOPE, { vector: queries[0]!, limit: LIMIT, kind: 'facts' });
  const openMs = performance.now() - t1;
  const t2 = performance.now();
  const memory = new InMemoryVectorIndex({ dimensions: DIMENSIONS });
  for (let i = 0; i < all.length; i += BATCH) {
    const part = all.slice(i, i + BATCH);
    await memory.upsert(part[0]!.id.startsWith('s') ? SMALL : SCOPE, part);
  }
  await memory.search(SCOPE, { vector: queries[0]!, limit: LIMIT, kind: 'facts' });
  const rebuildFloorMs = performance.now() - t2;
  const stored = all.length;

  const rawDb = new Database(file);
  rawDb.loadExtension(getLoadablePath());
  const raw = new RawSqliteVec(rawDb);
  const w = await interleaved(
    writes,
    async (i, restart) => {
      const point = input(make(prefill + 2 * i));
      restart();
      await index.upsert(SCOPE, [point]);
    },
    (i, restart) => {
      const point = make(prefill + 2 * i + 1);
      restart();
      raw.upsert(point);
    },
  );
  const r = await interleaved(
    options.reads,
    async () => {
      if ((await index.count(SCOPE)) !== size) throw new Error('adapter count is wrong');
    },
    () => {
      if (raw.count() !== size) throw new Error('raw count is wrong');
    },
  );

  let recall = 0;
  for (const q of queries.slice(0, RECALL_QUERIES)) {
    const truth = new Set(bruteForce(vectors, q, LIMIT));
    const hits = await index.search(SCOPE, { vector: q, limit: LIMIT, kind: 'facts' });
    recall += hits.filter((h) => truth.has(h.id)).length / LIMIT;
  }
  recall = round(recall / RECALL_QUERIES, 3);

  const query = (i: number) => queries[i % queries.length]!;
  const s = await interleaved(
    options.searches,
    (i) => index.search(SCOPE, { vector: query(i), limit: LIMIT, kind: 'facts' }),
    (i) => raw.query(query(i)),
  );
  const small: number[] = [];
  let smallFull = 0;
  for (let i = 0; i < Math.min(options.searches, 200); i++) {
    const t = performance.now();
    const hits = await index.search(SMALL, { vector: query(i), limit: LIMIT });
    small.push(performance.now() - t);
    if (hits.length === LIMIT) smallFull++;
  }
  const a = await interleaved(
    options.afterWrites,
    async (i, restart) => {
      await index.upsert(SCOPE, [{ id: `a${i}`, kind: 'facts', vector: query(i + 1), model: MODEL }]);
      restart();
      await index.search(SCOPE, { vector: query(i), limit: LIMIT, kind: 'facts' });
    },
    (i, restart) => {
      raw.upsert({ id: `r${i}`, vector: query(i + 2) });
      restart();
      raw.query(query(i));
    },
  );
  await index.close();
  rawDb.close();
  let bytes = 0;
  for (const f of [file, `${file}-wal`]) bytes += (await stat(f).catch(() => ({ size: 0 }))).size;
  options.log(`  sqlite-vec ${size}: done`);
  const p = (times: number[], q: number) =>
    round(
      percentile(
        [...times].sort((x, y) => x - y),
        q,
      ),
      3,
    );
  const embedMs = typeof embedRate === 'number' ? (stored / embedRate) * 1000 : Number.NaN;
  const details: Record<string, number> = {
    recall_at_10: recall,
    open_ms: round(openMs, 1),
    memory_rebuild_floor_ms: round(rebuildFloorMs, 0),
    memory_rebuild_embed_local_ms: round(embedMs, 0),
    small_user_search_p50_ms: p(small, 50),
    small_user_search_p95_ms: p(small, 95),
    small_user_full_ratio: round(smallFull / small.length, 3),
    bulk_points_per_s: round(perSecond(bulk, BATCH), 0),
  };
  const cpu = clientCpu({ upsert_1: w, count: r, query: s });
  Object.assign(details, cpu.details);
  return {
    adapter: 'sqlite-vec',
    size,
    writes,
    ...figures(w.adapter, r.adapter, s.adapter, a.adapter),
    firstSearchMs: round(openMs, 1),
    prefillMs: round(prefillMs, 0),
    diskMb: round(bytes / 1e6, 1),
    raw: figures(w.raw, r.raw, s.raw, a.raw),
    details,
    notes: [
      `sqlite-vec: raw = the adapter's statements by hand on better-sqlite3; ${DIMENSIONS}-d vectors in ${CLUSTERS} clusters;` +
        ' writes = one-point upserts, reads = count(scope), search = limit 10, kind facts (exact k-NN over the partition).',
      `  sqlite-vec ${size}: recall@10 against brute force over ${RECALL_QUERIES} queries: ${recall}.`,
      `  sqlite-vec ${size}: start with ${stored} stored points: a new connection + first search ${round(openMs, 1)} ms;` +
        ` an in-memory index instead: ${round(rebuildFloorMs, 0)} ms to upsert the same vectors again (a floor: they are` +
        ` not stored anywhere, so they must be embedded again) + ${
          typeof embedRate === 'number'
            ? `${round(embedMs / 1000, 1)} s to embed ${stored} texts with @kioku/embed-local (${round(embedRate, 0)} texts/s measured on ${EMBED_SAMPLE})`
            : `embedding (embed-local not available: ${embedRate})`
        }.`,
      `  sqlite-vec ${size}: a user with ${SMALL_USER} points in the same table: search p50/p95 ${p(small, 50)} / ${p(small, 95)} ms,` +
        ` ${smallFull}/${small.length} searches returned all ${LIMIT}.`,
      `  sqlite-vec ${size}: bulk upsert (prefill, ${BATCH} points per call): ${round(perSecond(bulk, BATCH), 0)} points/s; file + WAL ${round(bytes / 1e6, 1)} MB.`,
      `  sqlite-vec ${size}: client CPU per call, µs (adapter / raw): ${cpu.line}.`,
    ],
  };
}
