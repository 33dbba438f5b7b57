/**
 * `pnpm bench:store-json-ab --baseline <checkout> [--sizes 1000,10000,100000] [--rounds 6]`: the JSON fact
 * store of another checkout and of this one in ONE process, their calls interleaved round by round (the
 * order flips each round), so load from elsewhere on a shared machine hits both alike. Per size: the
 * median per-call time of `create` (10 a round), `get` (500), `search` (50, three queries) and the first
 * search of a fresh instance (loading the file and building the index), and current ÷ baseline (< 1:
 * faster). Complements `bench:store-compare`, whose separate runs are at the mercy of the machine's load.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cliArgs, table } from './util.js';

interface FactStoreLike {
  restore(snapshot: unknown): Promise<unknown>;
  create(scope: { userId: string }, input: { content: string }): Promise<unknown>;
  get(scope: { userId: string }, id: string): Promise<unknown>;
  search(scope: { userId: string }, query: { query: string }): Promise<unknown>;
}
type StoreClass = new (options: { directory: string }) => FactStoreLike;

const args = cliArgs();
const value = (flag: string) => {
  const at = args.indexOf(flag);
  return at === -1 ? undefined : args[at + 1];
};
const baseline = value('--baseline');
if (!baseline) throw new Error('usage: bench:store-json-ab --baseline <checkout> [--sizes …] [--rounds N]');
const sizes = (value('--sizes') ?? '1000,10000,100000').split(',').map(Number);
const rounds = Number(value('--rounds') ?? 6);
const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const load = async (root: string) =>
  (await import(pathToFileURL(path.join(path.resolve(root), 'packages/store-json/src/index.ts')).href))
    .JsonFactStore as StoreClass;
const sides = { baseline: await load(baseline), current: await load(here) };
const scope = { userId: 'bench-user' };
const queries = ['what does she like to eat', 'plans for the weekend trip', 'moved to a new city'];
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

const rows: string[][] = [];
for (const size of sizes) {
  const now = new Date().toISOString();
  const facts = Array.from({ length: size }, (_, i) => ({
    id: `f${i}`,
    userId: scope.userId,
    content: `fact ${i}: ${queries[i % 3]} and the ${i % 97}th thing about ${i % 13} people`,
    category: 'general',
    tags: [],
    metadata: {},
    provenance: { source: 'user' },
    createdAt: now,
    updatedAt: now,
    version: 1,
  }));
  const dirs = { baseline: '', current: '' };
  const times = {
    baseline: { create: [] as number[], get: [] as number[], search: [] as number[], first: [] as number[] },
    current: { create: [] as number[], get: [] as number[], search: [] as number[], first: [] as number[] },
  };
  for (const side of ['baseline', 'current'] as const) {
    dirs[side] = await mkdtemp(path.join(os.tmpdir(), `kioku-ab-${side}-`));
    await new sides[side]({ directory: dirs[side] }).restore({
      format: 'kioku.snapshot',
      schemaVersion: 1,
      kind: 'facts',
      createdAt: now,
      selector: scope,
      records: facts,
    });
  }
  for (let round = 0; round < rounds; round++) {
    for (const side of round % 2 ? (['current', 'baseline'] as const) : (['baseline', 'current'] as const)) {
      const store = new sides[side]({ directory: dirs[side] });
      let t = performance.now();
      await store.search(scope, { query: queries[round % 3]! });
      times[side].first.push(performance.now() - t);
      t = performance.now();
      for (let i = 0; i < 10; i++) await store.create(scope, { content: `round ${round} write ${i}` });
      times[side].create.push((performance.now() - t) / 10);
      t = performance.now();
      for (let i = 0; i < 500; i++) await store.get(scope, `f${(i * 7919) % size}`);
      times[side].get.push((performance.now() - t) / 500);
      t = performance.now();
      for (let i = 0; i < 50; i++) await store.search(scope, { query: queries[i % 3]! });
      times[side].search.push((performance.now() - t) / 50);
    }
  }
  for (const op of ['create', 'get', 'search', 'first'] as const) {
    const b = median(times.baseline[op]);
    const c = median(times.current[op]);
    rows.push([
      String(size),
      op === 'first' ? 'first search' : op,
      b.toFixed(3),
      c.toFixed(3),
      (c / b).toFixed(2),
    ]);
  }
  for (const dir of Object.values(dirs)) await rm(dir, { recursive: true, force: true });
}
console.log(
  `JSON fact store, baseline ${path.resolve(baseline)} vs current, ${rounds} interleaved rounds (median ms per call):`,
);
console.log(table(['facts', 'call', 'baseline ms', 'current ms', 'current ÷ baseline'], rows));
