/**
 * Token counting speed by kind of text: ordinary prose beside inputs a model or a tool can send at will
 * (base64, one letter repeated, a DNA alphabet: long runs with no whitespace, which plain BPE handles in
 * quadratic time).
 *
 *   pnpm bench:tokenizer [--sizes 10000,1000000,5000000] [--json]
 *
 * Each input is counted with core's `defaultTokenizer` (what every budget, offload, document and
 * ledger count goes through), on text it has not seen, in interleaved rounds (median of 21 at 10 KB, 5 at
 * 1 MB, 3 at 5 MB). Prose is sentences of the repository's READMEs,
 * code lines of its TypeScript sources, JSON records built from the sentences, drawn at random; base64, CJK, emoji and DNA are
 * generated from a fixed seed. Throughput is in MB/s of UTF-8, and "× prose" is how many times longer the
 * input takes than prose of the same size. Targets (issue 11): the worst input within 3× of prose at every
 * size; no 5 MB input over 5 s.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { defaultTokenizer } from '@kioku/core';
import { cliArgs, flagValue, round, seededRandom, table } from './util.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

function filesUnder(dir: string, suffix: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) out.push(...filesUnder(full, suffix));
    else if (name.endsWith(suffix)) out.push(full);
  }
  return out.sort();
}

/**
 * Units (sentences, lines, records) of `source` drawn at random until `chars` characters: no line repeats
 * the one before, so neither Kioku's line memo nor a whole-text cache answers, while words recur as they
 * do in real text.
 */
function draw(units: readonly string[], separator: string, chars: number, seed: number): string {
  return generated(chars, seed, (random) => units[Math.floor(random() * units.length)]! + separator);
}

function generated(chars: number, seed: number, pick: (random: () => number) => string): string {
  const random = seededRandom(seed);
  const parts: string[] = [];
  let length = 0;
  while (length < chars) {
    const part = pick(random);
    parts.push(part);
    length += part.length;
  }
  return parts.join('').slice(0, chars);
}

const prose = filesUnder(repoRoot, 'README.md')
  .map((file) => readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, ''))
  .join('\n\n');
const codeLines = filesUnder(path.join(repoRoot, 'packages'), '.ts')
  .filter((file) => file.includes(`${path.sep}src${path.sep}`))
  .flatMap((file) => readFileSync(file, 'utf8').split('\n'));
// Whitespace inside a sentence flattened: README sentences are wrapped over several lines, and a line that
// recurs in the drawn text would be answered by the tokenizer's line memo instead of being counted.
const sentences = prose
  .split(/(?<=[.!?])\s+/)
  .filter((s) => s.length > 20)
  .map((s) => s.replace(/\s+/g, ' '));
const records = sentences.map((content, i) =>
  JSON.stringify({
    id: `f${i.toString(16).padStart(8, '0')}`,
    userId: 'alice',
    category: 'user-preferences/general',
    content,
    tags: ['imported', `n${i % 17}`],
    createdAt: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
  }),
);
const EMOJI = [...'😀😂🥲😍🤔🙈🎉🔥✨👍🏽🚀🌍🍕⚽️🎸🧠💡📦🔒❤️'];

const INPUTS: Record<string, (chars: number, seed: number) => string> = {
  // Paragraphs of 3 to 8 sentences drawn at random: a line (a paragraph) practically never repeats.
  prose: (chars, seed) =>
    generated(chars, seed, (random) => {
      const count = 3 + Math.floor(random() * 6);
      const paragraph = Array.from(
        { length: count },
        () => sentences[Math.floor(random() * sentences.length)],
      );
      return `${paragraph.join(' ')}\n\n`;
    }),
  code: (chars, seed) => draw(codeLines, '\n', chars, seed),
  json: (chars, seed) => `[${draw(records, ',', chars - 2, seed)}]`,
  base64: (chars, seed) =>
    generated(chars, seed, (random) =>
      Buffer.from(Array.from({ length: 3_000 }, () => Math.floor(random() * 256))).toString('base64'),
    ),
  cjk: (chars, seed) =>
    generated(chars, seed, (random) => {
      const run = Array.from({ length: 5 + Math.floor(random() * 30) }, () =>
        String.fromCodePoint(0x4e00 + Math.floor(random() * 0x1400)),
      );
      return `${run.join('')}${random() < 0.7 ? '，' : '。'}`;
    }),
  emoji: (chars, seed) => generated(chars, seed, (random) => EMOJI[Math.floor(random() * EMOJI.length)]!),
  'one letter': (chars) => 'A'.repeat(chars),
  dna: (chars, seed) => generated(chars, seed, (random) => 'ACGT'[Math.floor(random() * 4)]!),
};

interface Row {
  input: string;
  chars: number;
  bytes: number;
  ms: number;
  mbPerSecond: number;
  timesProse: number;
}

/** Time of counting one text the tokenizer has not seen. */
function timeOnce(text: string): number {
  const started = performance.now();
  defaultTokenizer.count(text);
  return performance.now() - started;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/**
 * Median times of every input at one size over `runs` rounds. Each round counts one new text of every
 * input, one after the other, so a busy moment of the machine falls on all inputs alike rather than on
 * whichever was being measured then: the ratios to prose are what the targets are about.
 */
function measureSize(chars: number, runs: number) {
  const times = new Map<string, number[]>();
  const bytes = new Map<string, number>();
  for (let run = 0; run < runs; run++) {
    for (const [input, make] of Object.entries(INPUTS)) {
      // A distinct text per run (the one-letter input differs by its length), so no cache answers.
      const text = make(chars + run, run + 1);
      bytes.set(input, Buffer.byteLength(text, 'utf8'));
      times.set(input, [...(times.get(input) ?? []), timeOnce(text)]);
    }
  }
  return Object.keys(INPUTS).map((input) => ({
    input,
    ms: median(times.get(input)!),
    bytes: bytes.get(input)!,
  }));
}

function rate(m: { bytes: number; ms: number }): number {
  return m.bytes / 1e6 / (m.ms / 1000);
}

function main(): void {
  const args = cliArgs();
  const asJson = args.includes('--json');
  const sizes = (flagValue(args, '--sizes') ?? '10000,1000000,5000000').split(',').map(Number);
  // Warm up: the long-piece vocabulary, the JIT and gpt-tokenizer's tables, outside the timings.
  for (const make of Object.values(INPUTS)) defaultTokenizer.count(make(20_000, 999));

  const rows: Row[] = [];
  for (const chars of sizes) {
    const runs = chars <= 100_000 ? 21 : chars <= 1_000_000 ? 5 : 3;
    const measured = measureSize(chars, runs);
    const proseRate = rate(measured.find((m) => m.input === 'prose')!);
    for (const m of measured) {
      const mbPerSecond = rate(m);
      rows.push({ ...m, chars, mbPerSecond, timesProse: proseRate / mbPerSecond });
      if (!asJson)
        process.stderr.write(`  ${m.input} × ${chars} chars: ${round(m.ms)} ms (median of ${runs})\n`);
    }
  }

  const worst = rows.reduce((a, b) => (b.timesProse > a.timesProse ? b : a));
  const largest = Math.max(...sizes);
  const slowestLargest = rows.filter((r) => r.chars === largest).reduce((a, b) => (b.ms > a.ms ? b : a));
  const summary = {
    worstInput: worst.input,
    worstSize: worst.chars,
    worstTimesProse: round(worst.timesProse, 2),
    slowestLargestInput: slowestLargest.input,
    slowestLargestSeconds: round(slowestLargest.ms / 1000, 2),
    targetWithin3xOfProse: worst.timesProse <= 3,
    targetUnder5sAt5MB: largest < 5_000_000 || slowestLargest.ms <= 5_000,
  };
  console.log(
    table(
      ['input', 'chars', 'UTF-8 MB', 'ms', 'MB/s', '× prose'],
      rows.map((r) => [
        r.input,
        r.chars,
        round(r.bytes / 1e6, 2),
        round(r.ms, 1),
        round(r.mbPerSecond, 2),
        round(r.timesProse, 2),
      ]),
    ),
  );
  console.log(
    `\nworst: ${summary.worstInput} at ${summary.worstSize} chars, ${summary.worstTimesProse}× prose ` +
      `(target ≤ 3×: ${summary.targetWithin3xOfProse ? 'met' : 'NOT met'}); slowest at ${largest} chars: ` +
      `${summary.slowestLargestInput} ${summary.slowestLargestSeconds} s (target ≤ 5 s: ${summary.targetUnder5sAt5MB ? 'met' : 'NOT met'})`,
  );
  if (asJson) console.log(JSON.stringify({ bench: 'tokenizer', rows, summary }));
}

main();
