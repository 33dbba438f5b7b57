/**
 * `pnpm bench:store-sqlite-ab [--sizes 1000,10000] [--rounds 6]`: store-sqlite's native fact store
 * (`createSqliteNativeStores`: one table per kind, FTS5) and its storage-seam fact store, the default
 * (`createSqliteStores`: records over `@kioku/core/adapter`'s `storesOverBackend`) in ONE process,
 * their calls interleaved round by round (the order flips each round), so load from elsewhere on a shared
 * machine hits both alike. Each side is prefilled with the same facts by `restore()`. Per round and side, on
 * a fresh instance over the same file (as a new process would see it): the first search, the first `create`,
 * then the median of 50 `create`s, 500 `get`s and 50 `search`es (LoCoMo observation sentences and the store
 * bench's 30 queries), then one `list` (the seam decodes the partition) and 50 more `search`es. Printed: the median over rounds of each, and seam ÷ native (< 1: the seam is faster).
 * `--json` adds `{ seam_over_native: { <size>: { <call>: ratio } } }` as the last line.
 */
import { fork } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { FactStore } from '@kioku/core/store';
import { createSqliteNativeStores, createSqliteStores } from '@kioku/store-sqlite';
import { corpus } from './corpus.js';
import { seedFact } from './facts.js';
import { cliArgs, table } from './util.js';

const args = cliArgs();
const value = (flag: string) => {
  const at = args.indexOf(flag);
  return at === -1 ? undefined : args[at + 1];
};
const sizes = (value('--sizes') ?? '1000,10000').split(',').map(Number);
const rounds = Number(value('--rounds') ?? 6);
const json = args.includes('--json');

interface Opened {
  facts: FactStore;
  close(): Promise<void>;
}
const SIDES = {
  native: async (file: string): Promise<Opened> => {
    const stores = createSqliteNativeStores({ file });
    await stores.setup();
    return stores;
  },
  seam: async (file: string): Promise<Opened> => {
    const stores = createSqliteStores({ file });
    await stores.setup();
    return stores;
  },
} as const;
type Side = keyof typeof SIDES;
const OPS = ['first search', 'first create', 'create', 'get', 'search', 'search after a list'] as const;
type Op = (typeof OPS)[number];

const scope = { userId: 'bench-user' };
const { queries, seeds: seedsOf } = corpus('short');
const CREATES = 50;
const seeds = seedsOf(Math.max(...sizes) + rounds * (CREATES + 1) * 2 + 10);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const timed = async (fn: () => Promise<unknown>) => {
  const t = performance.now();
  await fn();
  return performance.now() - t;
};

/** What one side measured in one round: per call, the one time or the median of the round's calls. */
type RoundTimes = Record<Op, number>;
type Request =
  | { type: 'prefill'; file: string; size: number }
  | { type: 'round'; round: number; next: number };

/** A side in its own process: it holds one layout's code warm, as an app would (see the header). */
async function serveSide(side: Side): Promise<void> {
  let file = '';
  let size = 0;
  const answer = async (request: Request): Promise<unknown> => {
    if (request.type === 'prefill') {
      ({ file, size } = request);
      const now = new Date().toISOString();
      const facts = seeds.slice(0, size).map((seed, i) => seedFact(seed, i, scope.userId, now));
      const filler = await SIDES[side](file);
      await filler.facts.restore({
        format: 'kioku.snapshot',
        schemaVersion: 1,
        kind: 'facts',
        createdAt: now,
        selector: scope,
        records: facts,
      });
      await filler.close();
      return true;
    }
    return measureRound(side, file, size, request);
  };
  process.on('message', (request: Request) => {
    answer(request).then(
      (reply) => process.send!({ reply }),
      (error: Error) => process.send!({ error: error.stack ?? error.message }),
    );
  });
}

async function measureRound(
  side: Side,
  file: string,
  size: number,
  { round, next }: { round: number; next: number },
): Promise<RoundTimes> {
  const stores = await SIDES[side](file);
  const store = stores.facts;
  const seed = (i: number) => seeds[(next + i) % seeds.length]!;
  const t = {} as RoundTimes;
  t['first search'] = await timed(() => store.search(scope, { query: queries[round % 30]! }));
  t['first create'] = await timed(() => store.create(scope, seed(0)));
  const each: Record<'create' | 'get' | 'search' | 'search after a list', number[]> = {
    create: [],
    get: [],
    search: [],
    'search after a list': [],
  };
  for (let i = 1; i <= CREATES; i++) each.create.push(await timed(() => store.create(scope, seed(i))));
  for (let i = 0; i < 500; i++) each.get.push(await timed(() => store.get(scope, `f${(i * 7919) % size}`)));
  for (let i = 0; i < 50; i++)
    each.search.push(await timed(() => store.search(scope, { query: queries[i % queries.length]! })));
  // A list reads the partition whole: the seam then holds it decoded and searches it in memory.
  await store.list(scope, { limit: 1 });
  for (let i = 0; i < 50; i++)
    each['search after a list'].push(
      await timed(() => store.search(scope, { query: queries[i % queries.length]! })),
    );
  for (const op of ['create', 'get', 'search', 'search after a list'] as const) t[op] = median(each[op]);
  await stores.close();
  return t;
}

/** One child process per side, asked one request at a time. */
function startSide(side: Side): { ask(request: Request): Promise<unknown>; stop(): void } {
  const child = fork(fileURLToPath(import.meta.url), ['--side', side], {
    execArgv: process.execArgv,
    stdio: 'inherit',
  });
  return {
    ask: (request) =>
      new Promise((resolve, reject) => {
        child.once('message', (message: { reply?: unknown; error?: string }) =>
          message.error === undefined
            ? resolve(message.reply)
            : reject(new Error(`${side} side failed: ${message.error}`)),
        );
        child.send(request);
      }),
    stop: () => child.kill(),
  };
}

const childSide = value('--side') as Side | undefined;
if (childSide) await serveSide(childSide);
else await compare();

async function compare(): Promise<void> {
  const rows: string[][] = [];
  const ratios: Record<string, Record<Op, number>> = {};
  const sides = { native: startSide('native'), seam: startSide('seam') };
  for (const size of sizes) {
    const dirs = {} as Record<Side, string>;
    const times = {} as Record<Side, Record<Op, number[]>>;
    for (const side of Object.keys(SIDES) as Side[]) {
      dirs[side] = await mkdtemp(path.join(os.tmpdir(), `kioku-sqlite-ab-${side}-`));
      times[side] = Object.fromEntries(OPS.map((op) => [op, []])) as unknown as Record<Op, number[]>;
      await sides[side].ask({ type: 'prefill', file: path.join(dirs[side], 'kioku.db'), size });
    }
    let next = size;
    for (let round = 0; round < rounds; round++) {
      const order: Side[] = round % 2 ? ['seam', 'native'] : ['native', 'seam'];
      for (const side of order) {
        const measured = (await sides[side].ask({ type: 'round', round, next })) as RoundTimes;
        for (const op of OPS) times[side][op].push(measured[op]);
      }
      next += CREATES + 1;
    }
    ratios[size] = {} as Record<Op, number>;
    for (const op of OPS) {
      const n = median(times.native[op]);
      const s = median(times.seam[op]);
      ratios[size]![op] = Number((s / n).toFixed(2));
      rows.push([String(size), op, n.toFixed(3), s.toFixed(3), (s / n).toFixed(2)]);
    }
    for (const dir of Object.values(dirs)) await rm(dir, { recursive: true, force: true });
  }
  for (const side of Object.values(sides)) side.stop();
  console.log(
    `store-sqlite facts, native (createSqliteNativeStores) vs seam (createSqliteStores), ${rounds} interleaved rounds, load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} (median ms per call):`,
  );
  console.log(table(['facts', 'call', 'native ms', 'seam ms', 'seam ÷ native'], rows));
  if (json) console.log(JSON.stringify({ seam_over_native: ratios }));
}
