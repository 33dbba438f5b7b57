/**
 * `@kioku/store-redis`'s fact store in the store bench, each operation timed beside the same Redis work
 * done by hand with ioredis (`RawRedisFacts` below), interleaved (`src/store-interleave.ts`), on one
 * shared client, in one partition.
 *
 * Redis at `KIOKU_REDIS_URL`, else `REDIS_URL`, else `redis://127.0.0.1:6379`. Everything is written under
 * a fresh prefix `kioku-bench:<random>:` that is deleted afterwards (SCAN + UNLINK, also on Ctrl-C); nothing
 * else on the server is read or changed.
 *
 * Per size N, in one user's scope:
 * - prefill N − 2W facts with one `restore()` of a snapshot (the store's bulk path: one MULTI/EXEC);
 * - first search on the filled store (adapter): loads the partition and builds core's LexicalIndex; the raw
 *   side loads its copy then too (untimed);
 * - W `create`s through the adapter and W raw creates, interleaved (the partition then holds N facts);
 * - READS `get`s by random id through each;
 * - a warm-up (both copies take in the writes as changes), a check that both return the same facts in the
 *   same order, then SEARCHES searches through each (limit 8);
 * - search right after a write: rounds of create + search on each side, only the search timed;
 * - the first search of a new process (a new store: empty cache): once with the partition's stored index
 *   and the changes made since it was stored to replay, then three times once that index is current (the
 *   median is reported, with the stored index's size), then 300 searches on that new process's copy
 *   alternating with the same on the first store's (which holds every fact); the first search of three real
 *   new processes (`src/redis-cold-child.ts`, index current); beside them the raw HGETALL +
 *   JSON.parse of the partition (what any load of every record costs) and the warm search.
 */

import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Fact, Scope } from '@kioku/core';
import { factSearchText, LexicalIndex } from '@kioku/core/adapter';
import type { Redis as RedisClient } from 'ioredis';
import { type FactSeed, seedFact } from './facts.js';
import { type AdapterRow, clientCpu, figures, interleaved, walk } from './store-interleave.js';
import { timeSignals } from './store-signals.js';
import type { SqlOptions } from './store-sql.js';
import { percentile, round } from './util.js';

export type RedisRow = AdapterRow<'redis'>;

const execFileAsync = promisify(execFile);

const SCOPE: Scope = { userId: 'bench-user' };
/** Changes a search copy applies one by one before it reloads the partition (the adapter's default). */
const MAX_DELTA = 1000;

/** The Redis the bench uses (as the store-redis tests: `KIOKU_REDIS_URL`, then `REDIS_URL`). */
export function redisUrl(): string {
  return process.env.KIOKU_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
}

// The adapter's scripts, copied verbatim from packages/store-redis/src/records.ts (INSERT and SYNC): the
// same text has the same SHA-1, so both sides run the one script the server has cached. `checkScripts` warns
// when the adapter's source no longer contains them.
const INSERT = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
redis.call('HSETNX', KEYS[4], 'epoch', ARGV[3])
local seq = redis.call('HINCRBY', KEYS[4], 'seq', 1)
local ver = redis.call('HINCRBY', KEYS[4], 'ver', 1)
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], seq, ARGV[1])
redis.call('ZADD', KEYS[3], ver, ARGV[1])
return 1
`;

const SYNC = `
local m = redis.call('HMGET', KEYS[4], 'epoch', 'ver')
if not m[1] then return {'', '0', 'empty'} end
if m[1] ~= ARGV[1] then return {m[1], m[2], 'full'} end
if m[2] == ARGV[2] then return {m[1], m[2], 'same'} end
local limit = tonumber(ARGV[3])
local ids = redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. ARGV[2], '+inf', 'LIMIT', 0, limit + 1)
if #ids > limit then return {m[1], m[2], 'full'} end
local out = {m[1], m[2], 'delta'}
for _, id in ipairs(ids) do
  out[#out + 1] = id
  out[#out + 1] = redis.call('HGET', KEYS[1], id) or ''
  out[#out + 1] = redis.call('ZSCORE', KEYS[2], id) or '0'
end
return out
`;

/**
 * What the adapter does for `create`, `get` and `search`, written by hand on ioredis, with nothing else:
 *
 * - create: the fact's JSON built by hand (the adapter's fields, in its order), then `EVALSHA` of the
 *   adapter's INSERT script with the partition's four keys (the key strings built once);
 * - get: `HGET rec id` + `JSON.parse`;
 * - search: a hand-kept copy of the partition, as the adapter's cache keeps it: loaded once with the
 *   adapter's MULTI (HMGET meta, HGETALL rec, ZRANGE ord WITHSCORES) into core's `LexicalIndex`; then per
 *   search one `EVALSHA` of the adapter's SYNC script (what changed since the copy's version), the changes
 *   applied to the records and the index, `LexicalIndex.search(query, { limit: 8 })`, hits mapped to facts.
 *
 * The ratio therefore measures what the adapter adds: zod validation of the scope, id, input, built fact
 * and query; the key encoding; the error wrapping; the partition cache's bookkeeping (LRU, one sync in flight
 * per partition).
 */
class RawRedisFacts {
  readonly #client: RedisClient;
  readonly #keys: string[];
  readonly #insertSha: string;
  readonly #syncSha: string;
  #token = 0;
  readonly #tokenBase = randomBytes(8).toString('hex');
  // The search copy.
  #epoch = '';
  #version = '0';
  #loaded = false;
  readonly #facts = new Map<string, Fact>();
  #index = new LexicalIndex();

  constructor(client: RedisClient, base: string, shas: { insert: string; sync: string }) {
    this.#client = client;
    this.#keys = ['rec', 'ord', 'log', 'meta'].map((suffix) => `${base}:${suffix}`);
    this.#insertSha = shas.insert;
    this.#syncSha = shas.sync;
  }

  async create(id: string, seed: FactSeed, now: string): Promise<void> {
    const fact: Fact = {
      id,
      userId: SCOPE.userId,
      content: seed.content,
      category: seed.category,
      tags: seed.tags,
      metadata: {},
      provenance: { source: 'user' },
      createdAt: now,
      updatedAt: now,
      version: 1,
    };
    this.#token += 1;
    const inserted = await this.#client.evalsha(
      this.#insertSha,
      4,
      ...this.#keys,
      id,
      JSON.stringify(fact),
      `${this.#tokenBase}.${this.#token.toString(36)}`,
    );
    if (inserted !== 1) throw new Error(`raw insert of ${id} conflicted`);
  }

  async get(id: string): Promise<Fact | null> {
    const json = await this.#client.hget(this.#keys[0]!, id);
    return json === null ? null : (JSON.parse(json) as Fact);
  }

  async search(query: string, limit = 8): Promise<Array<{ fact: Fact; score: number }>> {
    if (!this.#loaded) await this.#load();
    else {
      const reply = (await this.#client.evalsha(
        this.#syncSha,
        4,
        ...this.#keys,
        this.#epoch,
        this.#version,
        MAX_DELTA,
      )) as string[];
      const kind = reply[2];
      if (kind === 'full' || kind === 'empty') await this.#load();
      else if (kind === 'delta') {
        for (let i = 3; i < reply.length; i += 3) {
          const id = reply[i]!;
          const json = reply[i + 1]!;
          this.#index.remove(id);
          if (json === '') this.#facts.delete(id);
          else {
            const fact = JSON.parse(json) as Fact;
            this.#facts.set(id, fact);
            this.#index.set(id, factSearchText(fact));
          }
        }
        this.#epoch = reply[0]!;
        this.#version = reply[1]!;
      }
    }
    return this.#index
      .search(query, { limit })
      .map((hit) => ({ fact: this.#facts.get(hit.id)!, score: hit.score }));
  }

  async #load(): Promise<void> {
    const [rec, ord, , meta] = this.#keys as [string, string, string, string];
    const results = await this.#client
      .multi()
      .hmget(meta, 'epoch', 'ver')
      .hgetall(rec)
      .zrange(ord, '0', '-1', 'WITHSCORES')
      .exec();
    const [m, hash, order] = results!.map(([, value]) => value) as [
      Array<string | null>,
      Record<string, string>,
      string[],
    ];
    this.#facts.clear();
    this.#index = new LexicalIndex();
    for (let i = 0; i < order.length; i += 2) {
      const json = hash[order[i]!];
      if (json === undefined) continue;
      const fact = JSON.parse(json) as Fact;
      this.#facts.set(fact.id, fact);
      this.#index.set(fact.id, factSearchText(fact));
    }
    this.#epoch = m[0] ?? '';
    this.#version = m[1] ?? '0';
    this.#loaded = true;
  }
}

const idsOf = (hits: ReadonlyArray<{ fact: { id: string } }>) => hits.map((h) => h.fact.id).join(',');

/** Every size on one client, under a fresh prefix deleted at the end (SCAN + UNLINK, also on Ctrl-C). */
export async function benchRedis(
  sizes: readonly number[],
  seeds: readonly FactSeed[],
  options: SqlOptions,
): Promise<RedisRow[] | string> {
  let mod: typeof import('@kioku/store-redis');
  let Redis: typeof import('ioredis').Redis;
  try {
    mod = await import('@kioku/store-redis');
    Redis = (await import('ioredis')).Redis;
  } catch (error) {
    return (error as Error).message.split('\n')[0] ?? 'import failed';
  }
  const url = redisUrl();
  const where = url.replace(/\/\/[^@]*@/, '//');
  const client = new Redis(url, { ...mod.DEFAULT_REDIS_OPTIONS, lazyConnect: true, connectTimeout: 3000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await new mod.RedisConnection({ client }).setup();
  } catch (error) {
    client.disconnect();
    return `cannot use Redis at ${where}: ${(error as Error).message}`;
  }
  const prefix = `kioku-bench:${randomBytes(4).toString('hex')}:`;
  const cleanup = () => new mod.RedisConnection({ client, prefix }).deleteAll();
  const onSignal = () => {
    void cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const rows: RedisRow[] = [];
  try {
    const shas = {
      insert: await client.script('LOAD', INSERT).then(String),
      sync: await client.script('LOAD', SYNC).then(String),
    };
    await checkScripts(options.log);
    for (const size of sizes) {
      const sizePrefix = `${prefix}${size}:`;
      const newProcess = () => new mod.RedisFactStore({ client, prefix: sizePrefix });
      const store = newProcess();
      const base = new mod.KeySpace(sizePrefix).base('facts', SCOPE);
      const raw = new RawRedisFacts(client, base, shas);
      const row = await run(store, raw, client, base, size, seeds, options, where);
      rows.push(await coldStarts(row, store, newProcess, client, base, options.queries, [url, sizePrefix]));
      await new mod.RedisConnection({ client, prefix: sizePrefix }).deleteAll();
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await cleanup().catch(() => {});
    await client.quit().catch(() => client.disconnect());
  }
  return rows;
}

/**
 * The raw side runs copies of the adapter's scripts: warn when the adapter's source no longer holds them
 * verbatim (the scripts would then differ and the comparison would not be of the same work).
 */
async function checkScripts(log: (line: string) => void): Promise<void> {
  try {
    const pkg = createRequire(import.meta.url).resolve('@kioku/store-redis/package.json');
    const source = await readFile(path.join(path.dirname(pkg), 'src', 'records.ts'), 'utf8');
    for (const [name, script] of Object.entries({ INSERT, SYNC })) {
      if (!source.includes(script))
        log(`  redis: the raw ${name} script is not the adapter's any more (update src/store-redis.ts)`);
    }
  } catch {
    log("  redis: cannot read store-redis's src/records.ts; the raw scripts are assumed to be the adapter's");
  }
}

/** How long the first search of a new process takes (see the file's comment), added to `row`. */
async function coldStarts(
  row: RedisRow,
  store: import('@kioku/store-redis').RedisFactStore,
  newProcess: () => import('@kioku/store-redis').RedisFactStore,
  client: RedisClient,
  base: string,
  queries: readonly string[],
  where: [url: string, prefix: string],
): Promise<RedisRow> {
  const query = queries[1]!;
  const stored = async () => (await client.getrange(`${base}:idx`, 0, 200)).split('\n').slice(0, 2);
  const current = async () => (await client.hmget(`${base}:meta`, 'epoch', 'ver')).join('\n');
  const behind = async () => {
    const [[epoch, at], ver] = [await stored(), (await client.hget(`${base}:meta`, 'ver')) ?? '0'];
    return epoch === undefined || at === undefined ? -1 : Number(ver) - Number(at);
  };
  const replayed = await behind();
  let last = newProcess();
  const time = async () => {
    last = newProcess();
    const t = performance.now();
    await last.search(SCOPE, { query });
    return performance.now() - t;
  };
  const replayMs = await time();
  // The new process stores the index again after its search when it replayed many changes; wait for that.
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline && (await stored()).join('\n') !== (await current())) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  // The median of three, as one run is at the mercy of a garbage collection or a busy machine.
  const currentRuns = [await time(), await time(), await time()].sort((a, b) => a - b);
  const currentMs = currentRuns[1]!;
  const storedMb = (await client.strlen(`${base}:idx`)) / 1e6;
  // The same in real new processes: no heap of earlier copies to collect, and nothing compiled yet.
  const child = path.join(path.dirname(fileURLToPath(import.meta.url)), 'redis-cold-child.ts');
  const childRuns: number[] = [];
  for (let i = 0; i < 3; i++) {
    const { stdout } = await execFileAsync(process.execPath, [
      ...process.execArgv,
      child,
      ...where,
      SCOPE.userId,
      query,
    ]);
    childRuns.push(Number(stdout.trim()));
  }
  childRuns.sort((a, b) => a - b);
  // The searches after it on that copy (the index, and only the facts it has seen: each search's hits not
  // seen yet cost one HMGET), alternating with the same searches on the first store's copy (every fact).
  const after: number[] = [];
  const whole: number[] = [];
  for (let i = 0; i < 300; i++) {
    const q = { query: queries[i % queries.length]!, limit: 8 };
    let t0 = performance.now();
    await last.search(SCOPE, q);
    after.push(performance.now() - t0);
    t0 = performance.now();
    await store.search(SCOPE, q);
    whole.push(performance.now() - t0);
  }
  const afterP50 = percentile(
    after.sort((a, b) => a - b),
    50,
  );
  const wholeP50 = percentile(
    whole.sort((a, b) => a - b),
    50,
  );
  const t = performance.now();
  const hash = await client.hgetall(`${base}:rec`);
  for (const json of Object.values(hash)) JSON.parse(json);
  const rawLoadMs = performance.now() - t;
  const ms = (x: number) => round(x, 1);
  return {
    ...row,
    details: {
      ...row.details,
      cold_replay_ms: ms(replayMs),
      cold_replayed_changes: replayed,
      cold_current_ms: ms(currentMs),
      stored_index_mb: round(storedMb, 1),
      cold_child_process_ms: ms(childRuns[1]!),
      cold_copy_search_p50_ms: round(afterP50, 3),
      whole_copy_search_p50_ms: round(wholeP50, 3),
      raw_load_ms: ms(rawLoadMs),
    },
    notes: [
      ...row.notes,
      `  redis ${row.size}: first search of a new process ${ms(replayMs)} ms (stored index ${replayed} changes behind;` +
        ` -1 = none), ${ms(currentMs)} ms (stored index current, median of ${currentRuns.map(ms).join(' / ')};` +
        ` ${round(storedMb, 1)} MB); in a child process ${ms(childRuns[1]!)} ms (median of ${childRuns.map(ms).join(' / ')});` +
        ` raw HGETALL + JSON.parse ${ms(rawLoadMs)} ms;` +
        ` warm search p50 ${row.searchP50} ms (raw ${row.raw.searchP50} ms); then, alternating, p50` +
        ` ${round(afterP50, 3)} ms on the new process's copy and ${round(wholeP50, 3)} ms on the first store's;` +
        ` first search after restore ${row.firstSearchMs} ms.`,
    ],
  };
}

async function run(
  store: import('@kioku/store-redis').RedisFactStore,
  raw: RawRedisFacts,
  client: RedisClient,
  base: string,
  size: number,
  seeds: readonly FactSeed[],
  options: SqlOptions,
  where: string,
): Promise<RedisRow> {
  const { queries } = options;
  const writes = Math.min(options.writes, Math.floor(size / 4));
  const prefill = size - 2 * writes;
  const now = new Date().toISOString();
  const t0 = performance.now();
  await store.restore({
    format: 'kioku.snapshot',
    schemaVersion: 1,
    kind: 'facts',
    createdAt: now,
    selector: { userId: SCOPE.userId },
    records: seeds.slice(0, prefill).map((seed, i) => seedFact(seed, i, SCOPE.userId, now)),
  });
  const prefillMs = performance.now() - t0;
  options.log(`  redis ${size}: prefilled ${prefill} facts in ${(prefillMs / 1000).toFixed(1)} s`);

  const t1 = performance.now();
  await store.search(SCOPE, { query: queries[0]! });
  const firstSearchMs = performance.now() - t1;
  // The raw copy is loaded now too, so both copies then take in the same writes as changes.
  await raw.search(queries[0]!);

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

  const nextA = walk(ids, 7);
  const nextB = walk(ids, 11);
  const r = await interleaved(
    options.reads,
    async () => {
      if (!(await store.get(SCOPE, nextA()))) throw new Error('adapter read missed');
    },
    async () => {
      if (!(await raw.get(nextB()))) throw new Error('raw read missed');
    },
  );

  // Warm-up (both copies take in the writes above), then the same results from both.
  for (const query of queries.slice(0, 30)) {
    const a = idsOf(await store.search(SCOPE, { query }));
    const b = idsOf(await raw.search(query));
    if (a !== b) console.error(`  redis ${size}: raw search differs for "${query}": ${a} vs ${b}`);
  }
  const s = await interleaved(
    options.searches,
    (i) => store.search(SCOPE, { query: queries[i % queries.length]! }),
    (i) => raw.search(queries[i % queries.length]!),
  );
  await timeSignals('redis', size, store, SCOPE, queries, options.searches);
  // A search right after each write: the copy fetches and indexes the new facts (both sides' writes).
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
  let bytes = 0;
  for (const suffix of ['rec', 'ord', 'log', 'meta']) {
    bytes += Number((await client.memory('USAGE', `${base}:${suffix}`, 'SAMPLES', 0)) ?? 0);
  }
  options.log(`  redis ${size}: done`);
  // Client CPU per call (this process): with Redis on the same machine, wall-clock time also holds waits.
  const cpu = clientCpu({ write: w, read: r, search: s });
  const details: Record<string, number> = {};
  Object.assign(details, cpu.details);
  return {
    adapter: 'redis',
    size,
    writes,
    ...figures(w.adapter, r.adapter, s.adapter, a.adapter),
    firstSearchMs: round(firstSearchMs, 1),
    prefillMs: round(prefillMs, 0),
    diskMb: round(bytes / 1e6, 1),
    raw: figures(w.raw, r.raw, s.raw, a.raw),
    details,
    notes: [
      `redis: ${where}; raw = the same commands by hand on the same ioredis client: EVALSHA of the adapter's INSERT script`,
      '  (JSON built by hand), HGET + JSON.parse, and search on a hand-kept copy (EVALSHA of its SYNC script, then core',
      "  LexicalIndex); db MB = MEMORY USAGE of the partition's four keys.",
      `  redis ${size}: client CPU per call, µs (adapter / raw): ${cpu.line}.`,
    ],
  };
}
