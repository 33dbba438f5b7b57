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
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { FactStore } from '@kioku/core/store';
import { createSqliteNativeStores, createSqliteStores } from '@kioku/store-sqlite';
import { corpus } from './corpus.js';
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

const rows: string[][] = [];
const ratios: Record<string, Record<Op, number>> = {};
for (const size of sizes) {
  const now = new Date().toISOString();
  const facts = seeds.slice(0, size).map((seed, i) => ({
    id: `f${i}`,
    userId: scope.userId,
    content: seed.content,
    category: seed.category,
    tags: seed.tags,
    metadata: {},
    provenance: { source: 'import' },
    createdAt: now,
    updatedAt: now,
    version: 1,
  }));
  const dirs = {} as Record<Side, string>;
  const times = {} as Record<Side, Record<Op, number[]>>;
  for (const side of Object.keys(SIDES) as Side[]) {
    dirs[side] = await mkdtemp(path.join(os.tmpdir(), `kioku-sqlite-ab-${side}-`));
    times[side] = Object.fromEntries(OPS.map((op) => [op, []])) as unknown as Record<Op, number[]>;
    const filler = await SIDES[side](path.join(dirs[side], 'kioku.db'));
    await filler.facts.restore({
      format: 'kioku.snapshot',
      schemaVersion: 1,
      kind: 'facts',
      createdAt: now,
      selector: scope,
      records: facts,
    });
    await filler.close();
  }
  let next = size;
  for (let round = 0; round < rounds; round++) {
    const order: Side[] = round % 2 ? ['seam', 'native'] : ['native', 'seam'];
    for (const side of order) {
      const stores = await SIDES[side](path.join(dirs[side], 'kioku.db'));
      const store = stores.facts;
      const t = times[side];
      const seed = (i: number) => seeds[(next + i) % seeds.length]!;
      t['first search'].push(await timed(() => store.search(scope, { query: queries[round % 30]! })));
      t['first create'].push(await timed(() => store.create(scope, seed(0))));
      const each: Record<'create' | 'get' | 'search' | 'search after a list', number[]> = {
        create: [],
        get: [],
        search: [],
        'search after a list': [],
      };
      for (let i = 1; i <= CREATES; i++) each.create.push(await timed(() => store.create(scope, seed(i))));
      for (let i = 0; i < 500; i++)
        each.get.push(await timed(() => store.get(scope, `f${(i * 7919) % size}`)));
      for (let i = 0; i < 50; i++)
        each.search.push(await timed(() => store.search(scope, { query: queries[i % queries.length]! })));
      // A list reads the partition whole: the seam then holds it decoded and searches it in memory.
      await store.list(scope, { limit: 1 });
      for (let i = 0; i < 50; i++)
        each['search after a list'].push(
          await timed(() => store.search(scope, { query: queries[i % queries.length]! })),
        );
      for (const op of ['create', 'get', 'search', 'search after a list'] as const)
        t[op].push(median(each[op]));
      await stores.close();
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
console.log(
  `store-sqlite facts, native (createSqliteNativeStores) vs seam (createSqliteStores), ${rounds} interleaved rounds, load average ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} (median ms per call):`,
);
console.log(table(['facts', 'call', 'native ms', 'seam ms', 'seam ÷ native'], rows));
if (json) console.log(JSON.stringify({ seam_over_native: ratios }));
