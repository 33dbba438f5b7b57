import { performance } from 'node:perf_hooks';
import type { Engine } from './engines.js';
import { CATEGORY_NAMES, type Conversation } from './locomo.js';
import { percentile, round } from './util.js';

export const KS = [5, 10, 25, 50] as const;
export type AtK = Record<string, number>;

/** Published in the LoCoMo paper (Table 3), DRAGON dense retriever over dialog turns. */
export const DRAGON: AtK = { 5: 56.7, 10: 66.2, 25: 76.7, 50: 82.7 };

/** Recall over some of the conversations. */
export interface Scores {
  overall: AtK;
  byCategory: Record<string, AtK>;
}

/**
 * The two halves: conversations 0–4 (the only ones any parameter was chosen on) and 5–9 (held out).
 */
export const HALVES = { '0-4': [0, 5], '5-9': [5, 10] } as const;

export interface EngineResult extends Scores {
  name: string;
  halves: Record<keyof typeof HALVES, Scores>;
  latency: { p50: number; p95: number; mean: number };
  buildMs: number;
}

function atK(sums: number[], n: number): AtK {
  return Object.fromEntries(KS.map((k, i) => [String(k), round((100 * sums[i]!) / n)]));
}

export async function evaluate(
  engine: Engine,
  conversations: readonly Conversation[],
): Promise<EngineResult> {
  // Warm-up (JIT) on the first conversation, not timed or scored. (A store engine builds each conversation
  // as a user of its own, so the warm-up's facts are another user's: in the table, not in the results.)
  const warm = await engine.build(conversations[0]!.units);
  for (const q of conversations[0]!.questions.slice(0, 100)) await warm(q.question, 50);

  const tally = () => ({
    n: 0,
    total: KS.map(() => 0),
    perCat: new Map<number, { n: number; sums: number[] }>(),
  });
  const all = tally();
  const halves = { '0-4': tally(), '5-9': tally() };
  const latencies: number[] = [];
  let buildMs = 0;
  for (const [index, conv] of conversations.entries()) {
    const half = index < HALVES['0-4'][1] ? halves['0-4'] : halves['5-9'];
    const t0 = performance.now();
    const search = await engine.build(conv.units);
    buildMs += performance.now() - t0;
    for (const q of conv.questions) {
      const start = performance.now();
      const ids = await search(q.question, 50);
      latencies.push(performance.now() - start);
      for (const t of [all, half]) {
        const cat = t.perCat.get(q.category) ?? { n: 0, sums: KS.map(() => 0) };
        t.perCat.set(q.category, cat);
        cat.n += 1;
        t.n += 1;
        KS.forEach((k, i) => {
          const top = new Set(ids.slice(0, k));
          const score =
            q.evidence.length === 0 ? 1 : q.evidence.filter((e) => top.has(e)).length / q.evidence.length;
          t.total[i]! += score;
          cat.sums[i]! += score;
        });
      }
    }
  }
  latencies.sort((a, b) => a - b);
  const scores = (t: ReturnType<typeof tally>): Scores => ({
    overall: atK(t.total, t.n),
    byCategory: Object.fromEntries(
      [...t.perCat]
        .sort(([a], [b]) => a - b)
        .map(([c, v]) => [CATEGORY_NAMES[c] ?? String(c), atK(v.sums, v.n)]),
    ),
  });
  return {
    name: engine.name,
    ...scores(all),
    halves: { '0-4': scores(halves['0-4']), '5-9': scores(halves['5-9']) },
    latency: {
      p50: round(percentile(latencies, 50), 3),
      p95: round(percentile(latencies, 95), 3),
      mean: round(latencies.reduce((a, b) => a + b, 0) / latencies.length, 3),
    },
    buildMs: round(buildMs, 0),
  };
}
