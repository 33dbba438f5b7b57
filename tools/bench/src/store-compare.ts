/**
 * `pnpm bench:store-compare --baseline <checkout> [bench:store options]`: the store bench of two
 * checkouts side by side — the baseline (another worktree, e.g. main) and this one — run in turns
 * (baseline, current, baseline, current, … for `--rounds N`, default 2) so load from elsewhere on the
 * machine hits both alike. Each run is `bench:store … --json` in its checkout; the table shows the median
 * of each side per adapter, size and metric, and current ÷ baseline (× > 1: higher; for writes/s and
 * reads/s that is faster, for latencies slower). `--json` prints the same as one JSON object last.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

type Nested = Record<string, Record<string, number>>;
const METRICS = ['writes_per_s', 'reads_per_s', 'search_p50_ms', 'search_p95_ms', 'first_search_ms'] as const;

function args(): { baseline: string; rounds: number; json: boolean; rest: string[] } {
  const argv = process.argv.slice(2).filter((a) => a !== '--');
  const take = (name: string) => {
    const at = argv.indexOf(name);
    if (at === -1) return undefined;
    const [, value] = argv.splice(at, 2);
    return value;
  };
  const baseline = take('--baseline');
  if (!baseline) throw new Error('usage: bench:store-compare --baseline <checkout> [bench:store options]');
  const rounds = Number(take('--rounds') ?? 2);
  const json = argv.includes('--json');
  return { baseline: path.resolve(baseline), rounds, json, rest: argv.filter((a) => a !== '--json') };
}

async function bench(root: string, rest: string[]): Promise<Record<string, Nested>> {
  const { stdout } = await run('pnpm', ['--dir', root, 'bench:store', ...rest, '--json'], {
    maxBuffer: 64 * 1024 * 1024,
    env: {
      ...process.env,
      KIOKU_BENCH_DATA:
        process.env.KIOKU_BENCH_DATA ?? path.resolve(here, '..', '..', 'shared', 'bench-data'),
    },
  });
  const last = stdout.trim().split('\n').at(-1) ?? '{}';
  return JSON.parse(last) as Record<string, Nested>;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const options = args();
const sides = { baseline: [] as Array<Record<string, Nested>>, current: [] as Array<Record<string, Nested>> };
for (let round = 0; round < options.rounds; round++) {
  console.error(`round ${round + 1}/${options.rounds}: baseline ${options.baseline}`);
  sides.baseline.push(await bench(options.baseline, options.rest));
  console.error(`round ${round + 1}/${options.rounds}: current ${here}`);
  sides.current.push(await bench(here, options.rest));
}

const rows: string[][] = [];
const out: Record<
  string,
  Record<string, Record<string, { baseline: number; current: number; ratio: number }>>
> = {};
for (const metric of METRICS) {
  const first = sides.current[0]?.[metric] ?? {};
  for (const [adapter, sizes] of Object.entries(first)) {
    for (const size of Object.keys(sizes)) {
      const pick = (runs: Array<Record<string, Nested>>) =>
        median(
          runs.map((r) => r[metric]?.[adapter]?.[size]).filter((v): v is number => typeof v === 'number'),
        );
      const baseline = pick(sides.baseline);
      const current = pick(sides.current);
      const ratio = current / baseline;
      out[adapter] ??= {};
      const bySize = out[adapter];
      bySize[size] ??= {};
      bySize[size][metric] = { baseline, current, ratio };
      rows.push([adapter, size, metric, baseline.toFixed(3), current.toFixed(3), ratio.toFixed(2)]);
    }
  }
}
const head = ['adapter', 'facts', 'metric', 'baseline', 'current', 'current ÷ baseline'];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const line = (cells: string[]) =>
  cells.map((c, i) => (i < 3 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
console.log(
  `bench:store ${options.rest.join(' ')}: medians of ${options.rounds} runs per side, run in turns`,
);
console.log(line(head));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
for (const row of rows) console.log(line(row));
if (options.json)
  console.log(
    JSON.stringify({
      bench: 'fact-store-compare',
      baseline: options.baseline,
      rounds: options.rounds,
      results: out,
    }),
  );
