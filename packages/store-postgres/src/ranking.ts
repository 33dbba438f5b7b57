import { DEFAULT_BM25, DEFAULT_FEEDBACK } from '@kioku/core/adapter';

/**
 * core's LexicalIndex ranking over candidate rows read from the database: BM25+ (k1 1.2, b 0.5, d 1) per
 * query term times its weight, summed, times the number of the query's own terms the row holds; then one
 * round of pseudo-relevance feedback (see {@link expand}). The statistics are the partition's.
 */
export interface Candidate {
  seq: number;
  /** Term frequencies, in order of first occurrence. */
  tf: Map<string, number>;
  length: number;
}

export interface Scored extends Candidate {
  score: number;
}

export interface PartitionStats {
  /** Facts in the partition. */
  rows: number;
  /** Sum of their lengths in terms. */
  terms: number;
}

/** Term frequencies of a stored `search_terms`. */
export function termCounts(terms: string): Map<string, number> {
  const counts = new Map<string, number>();
  if (!terms) return counts;
  for (const term of terms.split(' ')) counts.set(term, (counts.get(term) ?? 0) + 1);
  return counts;
}

const idf = (n: number, df: number) => Math.log(1 + (n - df + 0.5) / (df + 0.5));

/** Every candidate scored; best first, ties in insertion order (`seq`), as core orders them. */
export function score(
  pool: Iterable<Candidate>,
  weights: ReadonlyMap<string, number>,
  original: ReadonlySet<string>,
  stats: PartitionStats,
  df: (term: string) => number,
): Scored[] {
  const { k1, b, d } = DEFAULT_BM25;
  const avgLength = stats.terms / stats.rows || 1;
  // Computed as core computes it, so scores are equal to the last bit.
  const norm0 = k1 * (1 - b);
  const norm1 = (k1 * b) / avgLength;
  // Terms in the query's order (core sums in that order: the same floating-point results).
  const terms: string[] = [];
  const idfs: number[] = [];
  const counts: boolean[] = [];
  for (const [term, weight] of weights) {
    terms.push(term);
    idfs.push(weight * idf(stats.rows, df(term)));
    counts.push(original.has(term));
  }
  const out: Scored[] = [];
  for (const row of pool) {
    const lengthNorm = norm1 * row.length;
    let sum = 0;
    let covered = 0;
    for (let i = 0; i < terms.length; i++) {
      const f = row.tf.get(terms[i]!);
      if (f === undefined) continue;
      sum += idfs[i]! * (d + (f * (k1 + 1)) / (f + norm0 + lengthNorm));
      if (counts[i]) covered += 1;
    }
    if (sum > 0) out.push({ ...row, score: sum * (covered || 1) });
  }
  return out.sort((x, y) => y.score - x.score || x.seq - y.seq);
}

/** The terms of the best rows that {@link expand} weighs: their frequencies must be known first. */
export function feedbackTerms(ranked: readonly Scored[], weights: ReadonlyMap<string, number>): string[] {
  const terms = new Set<string>();
  for (const r of ranked.slice(0, DEFAULT_FEEDBACK.docs)) {
    for (const term of r.tf.keys()) if (!weights.has(term)) terms.add(term);
  }
  return [...terms];
}

/**
 * Pseudo-relevance feedback as core does it: the most characteristic terms (tf × idf, weighted by each
 * result's share of the best score) of the top results join the query at a lower weight. Undefined when
 * the top results offer none.
 */
export function expand(
  ranked: readonly Scored[],
  weights: ReadonlyMap<string, number>,
  n: number,
  df: (term: string) => number,
): Map<string, number> | undefined {
  const params = DEFAULT_FEEDBACK;
  if (params.docs <= 0 || params.terms <= 0 || ranked.length === 0) return undefined;
  const best = ranked[0]!.score;
  if (!(best > 0)) return undefined;
  const candidates = new Map<string, number>();
  for (const r of ranked.slice(0, params.docs)) {
    if (r.length === 0) continue;
    const share = r.score / best / r.length;
    for (const [term, tf] of r.tf) {
      if (weights.has(term)) continue;
      candidates.set(term, (candidates.get(term) ?? 0) + share * tf * idf(n, df(term)));
    }
  }
  if (candidates.size === 0) return undefined;
  const chosen = [...candidates].sort((x, y) => y[1] - x[1]).slice(0, params.terms);
  const top = chosen[0]![1];
  const expanded = new Map<string, number>();
  for (const [term, w] of weights) expanded.set(term, w * params.queryWeight);
  for (const [term, w] of chosen) expanded.set(term, ((1 - params.queryWeight) * w) / top);
  return expanded;
}
