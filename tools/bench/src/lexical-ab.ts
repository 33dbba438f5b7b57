/**
 * `pnpm bench:lexical-ab --baseline <checkout> [--sizes 10000,100000] [--queries 3000] [--json]`: core's
 * `LexicalIndex` of another checkout and of this one in ONE process, over the same facts (`factSeeds`, the
 * turn bench's), asked the same questions (LoCoMo's, or the built-in list) alternately, the order flipping
 * every query, so a noisy machine slows both alike. Per size: each side's search latency (p50, p95, p99,
 * mean; limit 32, feedback on, as a turn asks) and current ÷ baseline. Every 100th question's hits are
 * compared and must be identical (a speed change to the index must not change a ranking): the bench stops
 * with an error otherwise. Both sides use the analyzer and ranking of their own checkout.
 */

import { existsSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { factSeeds, QUERIES } from './facts.js';
import { loadLocomo, locomoPath } from './locomo.js';
import { cliArgs, flagValue, mean, percentile, round, sizesArg, table } from './util.js';

interface IndexLike {
  set(id: string, text: string): void;
  search(query: string, options: { limit: number }): Array<{ id: string; score: number }>;
}
type IndexClass = new () => IndexLike;

const args = cliArgs();
const baseline = flagValue(args, '--baseline');
if (!baseline) {
  throw new Error(
    'usage: bench:lexical-ab --baseline <checkout> [--sizes 10000,100000] [--queries N] [--json]',
  );
}
const sizes = sizesArg(args, '10000,100000');
const queryCount = Number(flagValue(args, '--queries') ?? 3000);
const json = args.includes('--json');
/** Questions asked before timing starts on each side (JIT warm-up), not reported. */
const WARMUP = 300;
const LIMIT = 32;

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
async function load(root: string): Promise<IndexClass> {
  const file = path.join(path.resolve(root), 'packages/core/src/search/lexical-index.ts');
  if (!existsSync(file))
    throw new Error(`--baseline ${root}: no ${file} (give the root of a Kioku checkout)`);
  try {
    return (await import(pathToFileURL(file).href)).LexicalIndex as IndexClass;
  } catch (error) {
    throw new Error(
      `--baseline ${root}: could not load ${file} (${(error as Error).message.split('\n')[0]}); a new checkout needs \`pnpm install\` first`,
    );
  }
}
const sides = { baseline: await load(baseline), current: await load(here) };
const questions = existsSync(locomoPath())
  ? loadLocomo().flatMap((c) => c.questions.map((q) => q.question))
  : [...QUERIES];

const summary = (ms: number[]) => {
  const sorted = [...ms].sort((a, b) => a - b);
  return {
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    mean: mean(ms),
  };
};

const results = [];
for (const size of sizes) {
  const current = new sides.current();
  const base = new sides.baseline();
  factSeeds(size).forEach((seed, i) => {
    const text = `${seed.content} ${seed.tags.join(' ')}`;
    current.set(`f${i}`, text);
    base.set(`f${i}`, text);
  });
  const times = { current: [] as number[], baseline: [] as number[] };
  for (let i = 0; i < WARMUP + queryCount; i++) {
    // A question asked again gets a trailing space: the index keeps its last ranking for a repeat.
    const query = questions[i % questions.length]! + ' '.repeat(Math.floor(i / questions.length));
    const order = i % 2 === 0 ? (['current', 'baseline'] as const) : (['baseline', 'current'] as const);
    const hits: Record<string, string> = {};
    for (const side of order) {
      const index = side === 'current' ? current : base;
      const start = performance.now();
      const found = index.search(query, { limit: LIMIT });
      const ms = performance.now() - start;
      if (i >= WARMUP) times[side].push(ms);
      if (i % 100 === 0) hits[side] = JSON.stringify(found);
    }
    if (hits.current !== hits.baseline) {
      throw new Error(`${size} facts: the two indexes rank "${query}" differently`);
    }
  }
  const c = summary(times.current);
  const b = summary(times.baseline);
  results.push({ size, queries: queryCount, current: c, baseline: b });
  if (!json) process.stderr.write(`  ${size} done\n`);
}

console.log(`LexicalIndex A/B: ${here} (current) against ${path.resolve(baseline)} (baseline), one process,`);
console.log(
  `${queryCount} questions per size after ${WARMUP} not timed, alternating; search ms (limit ${LIMIT})`,
);
const r2 = (v: number) => round(v, 2);
console.log(
  table(
    ['facts', 'side', 'p50', 'p95', 'p99', 'mean'],
    results.flatMap((r) => [
      [r.size, 'baseline', r2(r.baseline.p50), r2(r.baseline.p95), r2(r.baseline.p99), r2(r.baseline.mean)],
      [r.size, 'current', r2(r.current.p50), r2(r.current.p95), r2(r.current.p99), r2(r.current.mean)],
      [
        r.size,
        'current ÷ baseline',
        r2(r.current.p50 / r.baseline.p50),
        r2(r.current.p95 / r.baseline.p95),
        r2(r.current.p99 / r.baseline.p99),
        r2(r.current.mean / r.baseline.mean),
      ],
    ]),
  ),
);
if (json) console.log(JSON.stringify({ bench: 'lexical-ab', limit: LIMIT, results }));
