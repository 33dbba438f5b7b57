/**
 * Fact-store throughput and search latency, in memory and in JSON files, at several store sizes in
 * one user's scope.
 *
 *   pnpm bench:store [--sizes 1000,10000,100000] [--adapter memory|json] [--no-index] [--json]
 *
 * memory: every fact is written with `create` (timed: writes/s), with the search index live from
 * the start (one fact and one search come first), as in an application.
 * json: a write rewrites the user's whole partition file, so the store is prefilled to the size in
 * one `restore()` of a snapshot (the store's own bulk path, one file write), then a sample of
 * `create`s is timed on top of it (the last 200 facts). Reads are `get` by random id; searches
 * cycle through a fixed list of 30 queries with the default limit (8).
 * Then the lexical index alone: core's index against the same ranking on MiniSearch (skip: --no-index).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { type Fact, type FactStore, InMemoryFactStore, LexicalIndex, type Scope } from '@kioku/core';
import { type FactSeed, factSeeds, QUERIES } from './facts.js';
import { MiniSearchLexicalIndex } from './minisearch-lexical-index.js';
import { cliArgs, percentile, round, table } from './util.js';

type Adapter = 'memory' | 'json';

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
}

const SCOPE: Scope = { userId: 'bench-user' };
const SEARCHES = 300;
const READS = 5000;
/** Timed JSON writes per size, on top of a store prefilled to size − JSON_WRITES. */
const JSON_WRITES = 200;

function parseArgs() {
  const args = cliArgs();
  const value = (flag: string) => {
    const i = args.indexOf(flag);
    const inline = args.find((a) => a.startsWith(`${flag}=`));
    return inline ? inline.slice(flag.length + 1) : i >= 0 ? args[i + 1] : undefined;
  };
  const sizes = (value('--sizes') ?? '1000,10000,100000').split(',').map((s) => Number(s.trim()));
  if (sizes.some((n) => !Number.isInteger(n) || n <= 0)) throw new Error('--sizes takes positive integers');
  const adapter = value('--adapter');
  if (adapter && adapter !== 'memory' && adapter !== 'json') throw new Error('--adapter is memory or json');
  return {
    json: args.includes('--json'),
    sizes,
    adapters: (adapter ? [adapter] : ['memory', 'json']) as Adapter[],
    index: !args.includes('--no-index'),
  };
}

type JsonStoreClass = new (options: { directory: string }) => FactStore;

/** @kioku/store-json, loaded lazily so the bench still runs when it is not importable. */
async function loadJsonStore(): Promise<JsonStoreClass | string> {
  try {
    const mod = (await import('@kioku/store-json')) as { JsonFactStore?: JsonStoreClass };
    return mod.JsonFactStore ?? 'JsonFactStore is not exported';
  } catch (error) {
    return (error as Error).message.split('\n')[0] ?? 'import failed';
  }
}

function factOf(seed: FactSeed, i: number, now: string): Fact {
  return {
    id: `f${i}`,
    userId: SCOPE.userId,
    content: seed.content,
    category: seed.category,
    tags: seed.tags,
    metadata: {},
    provenance: { source: 'import' },
    createdAt: now,
    updatedAt: now,
  };
}

async function timeSearches(store: FactStore): Promise<{ p50: number; p95: number }> {
  for (const query of QUERIES) await store.search(SCOPE, { query }); // warm-up
  const times: number[] = [];
  for (let i = 0; i < SEARCHES; i++) {
    const start = performance.now();
    await store.search(SCOPE, { query: QUERIES[i % QUERIES.length]! });
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { p50: round(percentile(times, 50), 3), p95: round(percentile(times, 95), 3) };
}

async function timeReads(store: FactStore, ids: readonly string[]): Promise<number> {
  let seed = 7;
  const start = performance.now();
  for (let i = 0; i < READS; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const fact = await store.get(SCOPE, ids[seed % ids.length]!);
    if (!fact) throw new Error('read missed');
  }
  return round(READS / ((performance.now() - start) / 1000), 0);
}

async function benchMemory(size: number, seeds: readonly FactSeed[]): Promise<Row> {
  const store = new InMemoryFactStore();
  // One fact and one search first, so the partition's index exists and every timed write updates it.
  const ids: string[] = [(await store.create(SCOPE, seeds[0]!)).id];
  await store.search(SCOPE, { query: 'warm' });
  const start = performance.now();
  for (let i = 1; i < size; i++) ids.push((await store.create(SCOPE, seeds[i]!)).id);
  const writeMs = performance.now() - start;
  const t0 = performance.now();
  await store.search(SCOPE, { query: QUERIES[0]! });
  const firstSearchMs = performance.now() - t0;
  const readsPerS = await timeReads(store, ids);
  const search = await timeSearches(store);
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

async function benchJson(
  JsonFactStore: JsonStoreClass,
  size: number,
  seeds: readonly FactSeed[],
): Promise<Row> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'kioku-bench-'));
  try {
    const sample = Math.min(JSON_WRITES, size);
    const prefill = size - sample;
    const now = new Date().toISOString();
    const t0 = performance.now();
    const filler = new JsonFactStore({ directory });
    if (prefill > 0) {
      await filler.restore({
        format: 'kioku.snapshot',
        schemaVersion: 1,
        kind: 'facts',
        createdAt: now,
        selector: { userId: SCOPE.userId },
        records: seeds.slice(0, prefill).map((seed, i) => factOf(seed, i, now)),
      });
    }
    const prefillMs = performance.now() - t0;
    // A fresh instance, as a new process would see the directory: the first access loads the file.
    const store = new JsonFactStore({ directory });
    const t1 = performance.now();
    await store.search(SCOPE, { query: QUERIES[0]! });
    const firstSearchMs = performance.now() - t1;
    const ids = Array.from({ length: prefill }, (_, i) => `f${i}`);
    const start = performance.now();
    for (let i = prefill; i < size; i++) ids.push((await store.create(SCOPE, seeds[i]!)).id);
    const writeMs = performance.now() - start;
    const readsPerS = await timeReads(store, ids);
    const search = await timeSearches(store);
    return {
      adapter: 'json',
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
function benchIndexes(sizes: readonly number[], seeds: readonly FactSeed[]): IndexRow[] {
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
      for (const query of QUERIES) index.search(query, { limit: 8 });
      const times: number[] = [];
      for (let i = 0; i < SEARCHES; i++) {
        const start = performance.now();
        index.search(QUERIES[i % QUERIES.length]!, { limit: 8 });
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

async function main(): Promise<void> {
  const options = parseArgs();
  const seeds = factSeeds(Math.max(...options.sizes));
  await benchMemory(2000, seeds.length >= 2000 ? seeds : factSeeds(2000)); // JIT warm-up, not reported
  const rows: Row[] = [];
  const unavailable: Record<string, string> = {};
  for (const adapter of options.adapters) {
    const JsonFactStore = adapter === 'json' ? await loadJsonStore() : undefined;
    if (typeof JsonFactStore === 'string') {
      unavailable.json = `not available (${JsonFactStore})`;
      continue;
    }
    for (const size of options.sizes) {
      const row = JsonFactStore
        ? await benchJson(JsonFactStore, size, seeds)
        : await benchMemory(size, seeds);
      rows.push(row);
      if (!options.json) console.error(`  ${adapter} ${size} done`);
    }
  }

  const indexRows = options.index ? benchIndexes(options.sizes, seeds) : [];

  console.log(
    [
      `Fact store bench: one user's scope, ${QUERIES.length} fixed queries (limit 8), ${SEARCHES} timed searches, ${READS} reads per size`,
      `node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}`,
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
    const by = (pick: (r: Row) => number) => {
      const out: Record<string, Record<string, number>> = {};
      for (const r of rows) {
        out[r.adapter] = { ...out[r.adapter], [String(r.size)]: pick(r) };
      }
      return out;
    };
    const out = {
      bench: 'fact-store',
      writes_per_s: by((r) => r.writesPerS),
      writes_timed: by((r) => r.writes),
      reads_per_s: by((r) => r.readsPerS),
      search_p50_ms: by((r) => r.searchP50),
      search_p95_ms: by((r) => r.searchP95),
      first_search_ms: by((r) => r.firstSearchMs),
      prefill_ms: by((r) => r.prefillMs),
      index_search_p95_ms: Object.fromEntries(
        [...new Set(indexRows.map((r) => r.index))].map((name) => [
          name,
          Object.fromEntries(indexRows.filter((r) => r.index === name).map((r) => [String(r.size), r.p95])),
        ]),
      ),
      ...(Object.keys(unavailable).length ? { unavailable } : {}),
    };
    console.log(JSON.stringify(out));
  }
}

await main();
