/** Command-line helpers shared by the benches. */

/** Arguments after the script name, without the `--` separators pnpm may pass along. */
export function cliArgs(): string[] {
  return process.argv.slice(2).filter((a) => a !== '--');
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export function round(value: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** A plain-text table: first column left-aligned, the rest right-aligned. */
export function table(header: string[], rows: Array<Array<string | number>>): string {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) =>
    r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(cells[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join(
    '\n',
  );
}

/** The value of `--flag value` or `--flag=value` in `args`, if present. */
export function flagValue(args: readonly string[], flag: string): string | undefined {
  const inline = args.find((a) => a.startsWith(`${flag}=`));
  if (inline) return inline.slice(flag.length + 1);
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1] : undefined;
}

/** `--sizes 1000,10000` style lists of positive integers. */
export function sizesArg(args: readonly string[], fallback: string): number[] {
  const sizes = (flagValue(args, '--sizes') ?? fallback).split(',').map((s) => Number(s.trim()));
  if (sizes.some((n) => !Number.isInteger(n) || n <= 0)) throw new Error('--sizes takes positive integers');
  return sizes;
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

/**
 * A seeded pseudo-random number in [0, 1) (mulberry32: 32-bit integer arithmetic, period 2^32). Not the
 * textbook LCG in doubles: `state * 1103515245` exceeds 2^53, loses its low bits and cycles after about
 * 10,500 draws, which made "random" inputs repeat (and caches answer them).
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** A seeded pseudo-random pick from `items`, for read sequences. */
export function randomPicks<T>(items: readonly T[], seed: number): () => T {
  const random = seededRandom(seed);
  return () => items[Math.floor(random() * items.length)]!;
}
