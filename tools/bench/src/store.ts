/**
 * Fact-store throughput and search latency, in memory, in JSON files, in SQLite and in PostgreSQL, at
 * several store sizes in one user's scope.
 *
 *   pnpm bench:store [--sizes 1000,10000,100000] [--adapter memory|json|sqlite|postgres|redis|qdrant|pgvector|sqlite-vec|all[,…]]
 *                    [--corpus short|long] [--users N] [--searches 300] [--no-index] [--json]
 *
 * --corpus long: paragraph-long records (50–300 words of LoCoMo dialogue) asked LoCoMo questions
 * (`src/corpus.ts`); --users N (postgres): each size's records spread over N users in one database,
 * searches in one user's scope (`src/layout.ts`).
 *
 * memory: every fact is written with `create` (timed: writes/s), with the search index live from
 * the start (one fact and one search come first), as in an application.
 * json, sqlite (store-sqlite's records table): a JSON write rewrites the user's whole partition file, so
 * the store is prefilled to the size in one `restore()` of a snapshot (the store's own bulk path, one file
 * write), then a sample of `create`s is timed on top of it (the last 200 facts). Reads are `get` by random
 * id; searches cycle through a fixed list of 30 queries with the default limit (8).
 * postgres: prefilled through the store's bulk path, then writes, reads and searches each timed
 * beside the same SQL issued with the raw driver (`src/store-sql.ts`, `src/store-raw.ts`).
 * redis, qdrant: the same method beside the same commands / requests made with the raw client
 * (`src/store-redis.ts`, `src/store-qdrant.ts`); qdrant is not part of `all` (see the README).
 * pgvector: store-postgres's vector index beside the same statements through raw postgres.js, with recall@10
 * against brute force (`src/store-pgvector.ts`); sqlite-vec: store-sqlite's vector index the same way, on the
 * same vectors, with its start (open) beside an in-memory index's rebuild (`src/store-sqlite-vec.ts`);
 * neither is part of `all`.
 * Then the lexical index alone: core's index against the same ranking on MiniSearch (with memory or json;
 * skip: --no-index).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Scope } from '@kioku/core';
import { LexicalIndex } from '@kioku/core/adapter';
import { type FactStore, InMemoryFactStore } from '@kioku/core/store';
import { CORPORA, type CorpusName, corpus } from './corpus.js';
import { type FactSeed, seedFact } from './facts.js';
import { parseLayout } from './layout.js';
import { MiniSearchLexicalIndex } from './minisearch-lexical-index.js';
import { benchPgvector, type PgvectorRow } from './store-pgvector.js';
import { benchQdrant, type QdrantRow } from './store-qdrant.js';
import { benchRedis, type RedisRow } from './store-redis.js';
import type { SqlAdapter, SqlRow } from './store-rows.js';
import { signalsRows, signalsTable, timeSignals } from './store-signals.js';
import { benchPostgres } from './store-sql.js';
import { benchSqliteVec, type SqliteVecRow } from './store-sqlite-vec.js';
import { cliArgs, percentile, randomPicks, round, table } from './util.js';

type Adapter = 'memory' | 'json' | 'sqlite' | SqlAdapter | 'redis' | 'qdrant' | 'pgvector' | 'sqlite-vec';
const ADAPTERS: readonly Adapter[] = [
  'memory',
  'json',
  'sqlite',
  'postgres',
  'redis',
  'qdrant',
  'sqlite-vec',
  'pgvector',
];
/** What `--adapter all` runs: not qdrant, whose stand-in server takes minutes per size (see the README). */
const ALL: readonly Adapter[] = ['memory', 'json', 'sqlite', 'postgres', 'redis'];
/** An adapter measured beside its raw driver or client. */
type RawRow = SqlRow | RedisRow | QdrantRow | PgvectorRow | SqliteVecRow;

interface Row {
  adapter: Adapter;
  size: number;
  writes: number;
  writesPerS: number;
  readsPerS: number;
  searchP50: number;
  searchP95: number;
  /** First search on the filled store: loads (json) and builds the index (json), or not (memory). */
  firstSearchMs: number;
  prefillMs: number;
  /** SQL, Redis and Qdrant adapters: the raw driver's or client's figures beside them, and the data size. */
  sql?: RawRow;
}

const SCOPE: Scope = { userId: 'bench-user' };
const SEARCHES = 300;
const READS = 5000;
/** Timed JSON writes per size, on top of a store prefilled to size − JSON_WRITES. */
const JSON_WRITES = 200;
/** Timed SQL writes per size and side (adapter, raw), on top of a store prefilled to size − 2 × SQL_WRITES. */
const SQL_WRITES = 500;
/** Rounds of "write, then search" per side at the end of a SQL size (the search is timed). */
const SQL_AFTER_WRITES = 60;

/** Sizes when --sizes is not given: the SQL stores start at 10k (1M: `--sizes 1000000`, see README). */
const DEFAULT_SIZES: Record<Adapter, string> = {
  memory: '1000,10000,100000',
  json: '1000,10000,100000',
  sqlite: '1000,10000,100000',
  postgres: '10000,100000',
  redis: '10000,100000',
  qdrant: '10000,100000',
  pgvector: '10000,100000',
  'sqlite-vec': '10000,100000',
};

function parseArgs() {
  const args = cliArgs();
  const value = (flag: string) => {
    const i = args.indexOf(flag);
    const inline = args.find((a) => a.startsWith(`${flag}=`));
    return inline ? inline.slice(flag.length + 1) : i >= 0 ? args[i + 1] : undefined;
  };
  const integers = (text: string, flag: string) => {
    const list = text.split(',').map((s) => Number(s.trim()));
    if (list.some((n) => !Number.isInteger(n) || n <= 0)) throw new Error(`${flag} takes positive integers`);
    return list;
  };
  const sizesFlag = value('--sizes');
  const sizesOf = (adapter: Adapter) => integers(sizesFlag ?? DEFAULT_SIZES[adapter], '--sizes');
  const named = (value('--adapter') ?? 'memory,json').split(',').map((a) => a.trim());
  const adapters = [
    ...(named.includes('all') ? ALL : []),
    ...(named.filter((a) => a !== 'all') as Adapter[]),
  ];
  const unknown = adapters.filter((a) => !ADAPTERS.includes(a));
  if (unknown.length)
    throw new Error(`--adapter is ${ADAPTERS.join(' | ')} | all (got ${unknown.join(', ')})`);
  const corpusName = (value('--corpus') ?? 'short') as CorpusName;
  if (!CORPORA.includes(corpusName)) throw new Error(`--corpus is ${CORPORA.join(' | ')}`);
  const layout = parseLayout(value('--users'));
  const oneUser = adapters.filter((a) => a !== 'postgres');
  if (layout.users > 1 && oneUser.length)
    throw new Error(`--users is for postgres (not ${oneUser.join(', ')})`);
  return {
    corpus: corpus(corpusName),
    layout,
    json: args.includes('--json'),
    sizesOf,
    adapters: ADAPTERS.filter((a) => adapters.includes(a)),
    searches: integers(value('--searches') ?? String(SEARCHES), '--searches')[0]!,
    index: !args.includes('--no-index'),
  };
}

/** Opens the fact store of a data directory: a new instance each call, as a new process would. */
type OpenFactStore = (directory: string) => Promise<FactStore>;

/**
 * The stores benched in one process over a temp directory, loaded lazily so the bench still runs when
 * one is not importable: @kioku/store-json, and store-sqlite's storage-seam stores (one records table).
 */
async function loadFileStore(adapter: 'json' | 'sqlite'): Promise<OpenFactStore | string> {
  try {
    if (adapter === 'json') {
      const { JsonFactStore } = await import('@kioku/store-json');
      return async (directory) => new JsonFactStore({ directory });
    }
    const { createSqliteStores } = await import('@kioku/store-sqlite');
    return async (directory) => {
      const stores = createSqliteStores({ file: path.join(directory, 'kioku.db') });
      await stores.setup();
      return stores.facts;
    };
  } catch (error) {
    return (error as Error).message.split('\n')[0] ?? 'import failed';
  }
}

async function timeSearches(
  store: FactStore,
  queries: readonly string[],
  searches: number,
): Promise<{ p50: number; p95: number }> {
  for (const query of queries.slice(0, 30)) await store.search(SCOPE, { query }); // warm-up
  const times: number[] = [];
  for (let i = 0; i < searches; i++) {
    const start = performance.now();
    await store.search(SCOPE, { query: queries[i % queries.length]! });
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { p50: round(percentile(times, 50), 3), p95: round(percentile(times, 95), 3) };
}

async function timeReads(store: FactStore, ids: readonly string[]): Promise<number> {
  const next = randomPicks(ids, 7);
  const start = performance.now();
  for (let i = 0; i < READS; i++) {
    const fact = await store.get(SCOPE, next());
    if (!fact) throw new Error('read missed');
  }
  return round(READS / ((performance.now() - start) / 1000), 0);
}

async function benchMemory(
  size: number,
  seeds: readonly FactSeed[],
  queries: readonly string[],
  searches = SEARCHES,
): Promise<Row> {
  const store = new InMemoryFactStore();
  // One fact and one search first, so the partition's index exists and every timed write updates it.
  const ids: string[] = [(await store.create(SCOPE, seeds[0]!)).id];
  await store.search(SCOPE, { query: 'warm' });
  const start = performance.now();
  for (let i = 1; i < size; i++) ids.push((await store.create(SCOPE, seeds[i]!)).id);
  const writeMs = performance.now() - start;
  const t0 = performance.now();
  await store.search(SCOPE, { query: queries[0]! });
  const firstSearchMs = performance.now() - t0;
  const readsPerS = await timeReads(store, ids);
  const search = await timeSearches(store, queries, searches);
  await timeSignals('memory', size, store, SCOPE, queries, searches);
  return {
    adapter: 'memory',
    size,
    writes: size - 1,
    writesPerS: round((size - 1) / (writeMs / 1000), 0),
    readsPerS,
    searchP50: search.p50,
    searchP95: search.p95,
    firstSearchMs: round(firstSearchMs, 1),
    prefillMs: round(writeMs, 0),
  };
}

async function benchFileStore(
  adapter: 'json' | 'sqlite',
  open: OpenFactStore,
  size: number,
  seeds: readonly FactSeed[],
  queries: readonly string[],
  searches = SEARCHES,
): Promise<Row> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'kioku-bench-'));
  try {
    const sample = Math.min(JSON_WRITES, size);
    const prefill = size - sample;
    const now = new Date().toISOString();
    const t0 = performance.now();
    const filler = await open(directory);
    if (prefill > 0) {
      await filler.restore({
        format: 'kioku.snapshot',
        schemaVersion: 1,
        kind: 'facts',
        createdAt: now,
        selector: { userId: SCOPE.userId },
        records: seeds.slice(0, prefill).map((seed, i) => seedFact(seed, i, SCOPE.userId, now)),
      });
    }
    const prefillMs = performance.now() - t0;
    // A fresh instance, as a new process would see the directory: the first access loads the file.
    const store = await open(directory);
    const t1 = performance.now();
    await store.search(SCOPE, { query: queries[0]! });
    const firstSearchMs = performance.now() - t1;
    const ids = Array.from({ length: prefill }, (_, i) => `f${i}`);
    const start = performance.now();
    for (let i = prefill; i < size; i++) ids.push((await store.create(SCOPE, seeds[i]!)).id);
    const writeMs = performance.now() - start;
    const readsPerS = await timeReads(store, ids);
    const search = await timeSearches(store, queries, searches);
    await timeSignals(adapter, size, store, SCOPE, queries, searches);
    return {
      adapter,
      size,
      writes: sample,
      writesPerS: round(sample / (writeMs / 1000), 1),
      readsPerS,
      searchP50: search.p50,
      searchP95: search.p95,
      firstSearchMs: round(firstSearchMs, 1),
      prefillMs: round(prefillMs, 0),
    };
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

interface IndexRow {
  index: string;
  size: number;
  p50: number;
  p95: number;
  buildMs: number;
}

/**
 * The lexical index alone (no store around it), core's own inverted index against the same ranking
 * written on MiniSearch (what core used before): why core has its own index.
 */
function benchIndexes(
  sizes: readonly number[],
  seeds: readonly FactSeed[],
  queries: readonly string[],
  searches: number,
): IndexRow[] {
  const kinds = [
    ['core LexicalIndex', () => new LexicalIndex()],
    ['same ranking on MiniSearch', () => new MiniSearchLexicalIndex()],
    ['MiniSearch, no feedback', () => new MiniSearchLexicalIndex({ feedback: false })],
  ] as const;
  const rows: IndexRow[] = [];
  for (const size of sizes) {
    for (const [name, make] of kinds) {
      const index = make();
      const t0 = performance.now();
      for (let i = 0; i < size; i++) index.set(`f${i}`, seeds[i]!.content);
      const buildMs = performance.now() - t0;
      for (const query of queries.slice(0, 30)) index.search(query, { limit: 8 });
      const times: number[] = [];
      for (let i = 0; i < searches; i++) {
        const start = performance.now();
        index.search(queries[i % queries.length]!, { limit: 8 });
        times.push(performance.now() - start);
      }
      times.sort((a, b) => a - b);
      rows.push({
        index: name,
        size,
        p50: round(percentile(times, 50), 3),
        p95: round(percentile(times, 95), 3),
        buildMs: round(buildMs, 0),
      });
    }
  }
  return rows;
}

/**
 * Adapter time ÷ raw time: writes and reads from the median call (an FTS5 merge or a checkpoint lands on
 * one side at random and would swamp a mean), searches from the mean and the percentiles.
 */
function ratios(sql: RawRow) {
  return {
    write: round(sql.writeP50Us / sql.raw.writeP50Us, 2),
    read: round(sql.readP50Us / sql.raw.readP50Us, 2),
    search: round(sql.searchMean / sql.raw.searchMean, 2),
    search_p50: round(sql.searchP50 / sql.raw.searchP50, 2),
    search_p95: round(sql.searchP95 / sql.raw.searchP95, 2),
  };
}

function sqlRow(r: RawRow): Row {
  return { ...r, sql: r };
}

async function main(): Promise<void> {
  const options = parseArgs();
  const allSizes = options.adapters.flatMap((a) => options.sizesOf(a));
  const { queries } = options.corpus;
  const seeds = options.corpus.seeds(Math.max(2000, ...allSizes));
  await benchMemory(2000, seeds, queries); // JIT warm-up, not reported
  signalsRows.length = 0;
  const rows: Row[] = [];
  const unavailable: Record<string, string> = {};
  const log = (line: string) => {
    if (!options.json) console.error(line);
  };
  for (const adapter of options.adapters) {
    const sizes = options.sizesOf(adapter);
    if (
      adapter === 'postgres' ||
      adapter === 'redis' ||
      adapter === 'qdrant' ||
      adapter === 'pgvector' ||
      adapter === 'sqlite-vec'
    ) {
      // Progress on stderr even with --json: a 1M run takes minutes.
      const progress = (line: string) => console.error(line);
      const sqlOptions = {
        searches: options.searches,
        reads: READS,
        writes: SQL_WRITES,
        afterWrites: SQL_AFTER_WRITES,
        log: progress,
        queries: options.corpus.queries,
        layout: options.layout,
      };
      const result =
        adapter === 'postgres'
          ? await benchPostgres(sizes, seeds, sqlOptions)
          : adapter === 'redis'
            ? await benchRedis(sizes, seeds, sqlOptions)
            : adapter === 'qdrant'
              ? await benchQdrant(sizes, seeds, sqlOptions)
              : adapter === 'pgvector'
                ? await benchPgvector(sizes, sqlOptions)
                : await benchSqliteVec(sizes, sqlOptions);
      if (typeof result === 'string') unavailable[adapter] = `not available (${result})`;
      else rows.push(...result.map(sqlRow));
      continue;
    }
    const open = adapter === 'memory' ? undefined : await loadFileStore(adapter);
    if (typeof open === 'string') {
      unavailable[adapter] = `not available (${open})`;
      continue;
    }
    for (const size of sizes) {
      const row =
        open && adapter !== 'memory'
          ? await benchFileStore(adapter, open, size, seeds, queries, options.searches)
          : await benchMemory(size, seeds, queries, options.searches);
      rows.push(row);
      log(`  ${adapter} ${size} done`);
    }
  }

  const inProcess = options.adapters.filter((a) => a === 'memory' || a === 'json');
  const indexSizes = [...new Set(inProcess.flatMap((a) => options.sizesOf(a)))].sort((a, b) => a - b);
  const indexRows =
    options.index && inProcess.length ? benchIndexes(indexSizes, seeds, queries, options.searches) : [];
  const sqlRows = rows.flatMap((r) => (r.sql ? [r.sql] : []));

  console.log(
    [
      `Fact store bench: ${options.corpus.name} corpus, ${options.layout.users > 1 ? `records spread over ${options.layout.users} users, searches in one user's scope` : "one user's scope"}, ${queries.length} queries (limit 8), ${options.searches} timed searches, ${READS} reads per size`,
      `node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
      '',
      table(
        [
          'adapter',
          'facts',
          'writes/s',
          '(timed)',
          'reads/s',
          'search p50 ms',
          'search p95 ms',
          'first search ms',
          'prefill ms',
        ],
        rows.map((r) => [
          r.adapter,
          r.size,
          r.writesPerS,
          r.writes,
          r.readsPerS,
          r.searchP50.toFixed(3),
          r.searchP95.toFixed(3),
          r.firstSearchMs.toFixed(1),
          r.prefillMs,
        ]),
      ),
      ...Object.entries(unavailable).map(([a, why]) => `${a}: ${why}`),
      ...(sqlRows.length
        ? [
            '',
            'Adapters beside the raw driver or client (same statements, commands or requests, interleaved). × = adapter time ÷ raw time:',
            'writes and reads from the median call (µs), searches from the mean (ms).',
            table(
              [
                'adapter',
                'facts',
                'write µs',
                'raw',
                '×',
                'read µs',
                'raw',
                '×',
                'search p50',
                'raw',
                'search p95',
                'raw',
                'mean',
                'raw',
                '×',
                'db MB',
              ],
              sqlRows.map((r) => {
                const x = ratios(r);
                return [
                  r.adapter,
                  r.size,
                  r.writeP50Us.toFixed(1),
                  r.raw.writeP50Us.toFixed(1),
                  x.write.toFixed(2),
                  r.readP50Us.toFixed(1),
                  r.raw.readP50Us.toFixed(1),
                  x.read.toFixed(2),
                  r.searchP50.toFixed(3),
                  r.raw.searchP50.toFixed(3),
                  r.searchP95.toFixed(3),
                  r.raw.searchP95.toFixed(3),
                  r.searchMean.toFixed(3),
                  r.raw.searchMean.toFixed(3),
                  x.search.toFixed(2),
                  Number.isFinite(r.diskMb) ? r.diskMb : '-',
                ];
              }),
            ),
            ...new Set(sqlRows.flatMap((r) => ('notes' in r ? r.notes : []))),
            '',
            `Search right after a write (${SQL_AFTER_WRITES} rounds of create + search per side; ms):`,
            table(
              ['adapter', 'facts', 'p50', 'raw', 'p95', 'raw', 'p95 without a write before'],
              sqlRows.map((r) => [
                r.adapter,
                r.size,
                r.afterWriteP50.toFixed(3),
                r.raw.afterWriteP50.toFixed(3),
                r.afterWriteP95.toFixed(3),
                r.raw.afterWriteP95.toFixed(3),
                r.searchP95.toFixed(3),
              ]),
            ),
            ...dynamicReadTable(sqlRows),
          ]
        : []),
      ...signalsTable(),
      ...(indexRows.length
        ? [
            '',
            'Lexical index alone (same texts and queries, limit 8):',
            table(
              ['index', 'facts', 'search p50 ms', 'search p95 ms', 'build ms'],
              indexRows.map((r) => [r.index, r.size, r.p50.toFixed(3), r.p95.toFixed(3), r.buildMs]),
            ),
          ]
        : []),
    ].join('\n'),
  );

  if (options.json) {
    type Nested = Record<string, Record<string, number>>;
    const by = <R extends { adapter: string; size: number }>(list: readonly R[], pick: (r: R) => number) => {
      const out: Nested = {};
      for (const r of list) out[r.adapter] = { ...out[r.adapter], [String(r.size)]: pick(r) };
      return out;
    };
    const overhead: Record<string, Nested> = {};
    for (const r of sqlRows) {
      overhead[r.adapter] ??= {};
      const slot = overhead[r.adapter]!;
      for (const [op, value] of Object.entries(ratios(r)))
        slot[op] = { ...slot[op], [String(r.size)]: value };
    }
    const out = {
      bench: 'fact-store',
      writes_per_s: by(rows, (r) => r.writesPerS),
      writes_timed: by(rows, (r) => r.writes),
      reads_per_s: by(rows, (r) => r.readsPerS),
      search_p50_ms: by(rows, (r) => r.searchP50),
      search_p95_ms: by(rows, (r) => r.searchP95),
      first_search_ms: by(rows, (r) => r.firstSearchMs),
      prefill_ms: by(rows, (r) => r.prefillMs),
      ...(sqlRows.length
        ? {
            search_mean_ms: by(sqlRows, (r) => r.searchMean),
            raw_writes_per_s: by(sqlRows, (r) => r.raw.writesPerS),
            raw_reads_per_s: by(sqlRows, (r) => r.raw.readsPerS),
            write_p50_us: by(sqlRows, (r) => r.writeP50Us),
            raw_write_p50_us: by(sqlRows, (r) => r.raw.writeP50Us),
            read_p50_us: by(sqlRows, (r) => r.readP50Us),
            raw_read_p50_us: by(sqlRows, (r) => r.raw.readP50Us),
            raw_search_p50_ms: by(sqlRows, (r) => r.raw.searchP50),
            raw_search_p95_ms: by(sqlRows, (r) => r.raw.searchP95),
            raw_search_mean_ms: by(sqlRows, (r) => r.raw.searchMean),
            search_after_write_p50_ms: by(sqlRows, (r) => r.afterWriteP50),
            search_after_write_p95_ms: by(sqlRows, (r) => r.afterWriteP95),
            raw_search_after_write_p50_ms: by(sqlRows, (r) => r.raw.afterWriteP50),
            raw_search_after_write_p95_ms: by(sqlRows, (r) => r.raw.afterWriteP95),
            overhead_ratio: overhead,
            ...dynamicReadJson(sqlRows),
            db_mb: by(
              sqlRows.filter((r) => Number.isFinite(r.diskMb)),
              (r) => r.diskMb,
            ),
          }
        : {}),
      ...(signalsRows.length
        ? {
            signals_search_p95_ms: by(signalsRows, (r) => r.signalsP95),
            no_signals_search_p95_ms: by(signalsRows, (r) => r.p95),
          }
        : {}),
      index_search_p95_ms: Object.fromEntries(
        [...new Set(indexRows.map((r) => r.index))].map((name) => [
          name,
          Object.fromEntries(indexRows.filter((r) => r.index === name).map((r) => [String(r.size), r.p95])),
        ]),
      ),
      ...(sqlRows.some((r) => 'details' in r && r.details)
        ? {
            adapter_details: Object.fromEntries(
              [...new Set(sqlRows.flatMap((r) => ('details' in r && r.details ? [r.adapter] : [])))].map(
                (name) => [
                  name,
                  Object.fromEntries(
                    sqlRows.flatMap((r) =>
                      r.adapter === name && 'details' in r && r.details ? [[String(r.size), r.details]] : [],
                    ),
                  ),
                ],
              ),
            ),
          }
        : {}),
      ...(Object.keys(unavailable).length ? { unavailable } : {}),
    };
    console.log(JSON.stringify(out));
  }
}

await main();

/** The fact block's per-turn read (PostgreSQL rows that timed it), as a table after the SQL tables. */
function dynamicReadTable(rows: readonly { adapter: string; size: number }[]): string[] {
  const timed = rows.filter((r): r is SqlRow => 'dynamicRead' in r && r.dynamicRead !== undefined);
  if (!timed.length) return [];
  return [
    '',
    "The fact block's read per turn: list({ order: 'updated', limit: 128 }) + count(), ms, beside the same SQL:",
    table(
      ['adapter', 'facts', 'p50', 'raw', 'p95', 'raw', '×'],
      timed.map((r) => {
        const d = r.dynamicRead!;
        return [
          r.adapter,
          r.size,
          d.p50.toFixed(3),
          d.rawP50.toFixed(3),
          d.p95.toFixed(3),
          d.rawP95.toFixed(3),
          d.ratio.toFixed(2),
        ];
      }),
    ),
  ];
}

function dynamicReadJson(rows: readonly { adapter: string; size: number }[]): Record<string, unknown> {
  const timed = rows.filter((r): r is SqlRow => 'dynamicRead' in r && r.dynamicRead !== undefined);
  if (!timed.length) return {};
  const by = (pick: (d: NonNullable<SqlRow['dynamicRead']>) => number) => {
    const out: Record<string, Record<string, number>> = {};
    for (const r of timed) out[r.adapter] = { ...out[r.adapter], [String(r.size)]: pick(r.dynamicRead!) };
    return out;
  };
  return {
    dynamic_read_p50_ms: by((d) => d.p50),
    dynamic_read_p95_ms: by((d) => d.p95),
    raw_dynamic_read_p50_ms: by((d) => d.rawP50),
    raw_dynamic_read_p95_ms: by((d) => d.rawP95),
    dynamic_read_ratio: by((d) => d.ratio),
  };
}
