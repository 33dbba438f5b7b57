/**
 * Kioku's lexical ranking rule, written once: BM25+ per query term times the term's weight, summed, times
 * the number of the query's own terms a text holds; then one round of pseudo-relevance feedback.
 *
 * {@link LexicalIndex} applies it over its postings. Stores that keep core's analysed terms in a database
 * (store-sqlite, store-postgres, and their raw-driver twins in tools/bench) read candidate rows and apply it
 * here, with their partition's statistics: {@link scoreCandidates}, {@link feedbackTerms},
 * {@link expandQuery}. Every formula is computed in the same order as LexicalIndex computes it, so the scores
 * are equal to the last bit (tested against it).
 */

import { TermCounts } from './term-counts.js';

export interface Bm25Params {
  /** Term-frequency saturation. */
  k1: number;
  /** Length normalisation (0 = none, 1 = full). */
  b: number;
  /** BM25+ lower bound added to every matching term's score. */
  d: number;
}

/**
 * Pseudo-relevance feedback (RM3-style query expansion): the best `docs` results of the query are
 * taken as relevant, the `terms` most characteristic terms in them (frequency × idf, weighted by
 * each result's score) are added to the query, and the query runs again.
 */
export interface FeedbackParams {
  /** How many top results feed the expansion; 0 turns feedback off. */
  docs: number;
  /** How many expansion terms are added. */
  terms: number;
  /** Weight of the original query terms (0–1); expansion terms share the rest. */
  queryWeight: number;
}

/**
 * k1 = 1.2 (the usual); b = 0.5 and d = 1 rather than the usual 0.75 and 0.5: memory texts are short
 * and similar in length, so length normalisation matters less (+0.7 R@10 on LoCoMo, tools/bench).
 */
export const DEFAULT_BM25: Readonly<Bm25Params> = Object.freeze({ k1: 1.2, b: 0.5, d: 1 });

export const DEFAULT_FEEDBACK: Readonly<FeedbackParams> = Object.freeze({
  docs: 5,
  terms: 10,
  queryWeight: 0.7,
});

/** BM25's idf of a term found in `df` of `n` texts (always positive). */
export function bm25Idf(n: number, df: number): number {
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}

/**
 * The query with feedback terms added: the `params.terms` best of `candidates` (term → weight; ties in
 * insertion order) join the query, scaled so the best weighs `1 - queryWeight`, and the query's own terms
 * weigh `queryWeight` times as much as before. Undefined when there is no candidate.
 */
export function feedbackQuery(
  weights: ReadonlyMap<string, number>,
  candidates: ReadonlyMap<string, number>,
  params: Readonly<FeedbackParams>,
): Map<string, number> | undefined {
  if (candidates.size === 0) return undefined;
  const chosen = [...candidates].sort((x, y) => y[1] - x[1]).slice(0, params.terms);
  const top = chosen[0]![1];
  const expanded = new Map<string, number>();
  for (const [term, w] of weights) expanded.set(term, w * params.queryWeight);
  for (const [term, w] of chosen) expanded.set(term, ((1 - params.queryWeight) * w) / top);
  return expanded;
}

/** A text read from a store, to be ranked: its analysed terms counted (see {@link termCounts}). */
export interface RankCandidate {
  /** Insertion order: among equal scores the lower comes first, as in LexicalIndex. */
  seq: number;
  /** Term frequencies, in order of first occurrence. */
  tf: ReadonlyMap<string, number>;
  /** Length in terms. */
  length: number;
}

/** A candidate with the score {@link scoreCandidates} wrote on it. */
export type ScoredCandidate<T extends RankCandidate = RankCandidate> = T & { score: number };

/** The partition the candidates are ranked in (all of it, not only the candidates). */
export interface PartitionStats {
  /** Texts in the partition. */
  rows: number;
  /** Sum of their lengths in terms. */
  terms: number;
}

/**
 * Term frequencies of an analysed text stored as its terms joined by single spaces, in order of first
 * occurrence; a single term is looked up in the text without building the map (see {@link TermCounts}).
 */
export function termCounts(terms: string): ReadonlyMap<string, number> {
  return new TermCounts(terms);
}

/**
 * Every candidate that holds a term of the query, best first (ties by `seq`), with its `score` written on
 * it. `weights` are the query's terms (in query order) with their weights, `original` the query's own terms
 * (feedback terms add evidence but do not count as coverage), `df` a term's document frequency in the
 * partition.
 *
 * The candidates themselves are returned, not copies: copying each one (`{ ...row, score }`) doubled a
 * SQLite search's time on LoCoMo. So scoring the same candidates again (the feedback round) overwrites the
 * scores of the earlier ranking: use a ranking before scoring its candidates again.
 */
export function scoreCandidates<T extends RankCandidate>(
  pool: Iterable<T>,
  weights: ReadonlyMap<string, number>,
  original: ReadonlySet<string>,
  stats: PartitionStats,
  df: (term: string) => number,
  params: Readonly<Bm25Params> = DEFAULT_BM25,
): Array<ScoredCandidate<T>> {
  const { k1, b, d } = params;
  const avgLength = stats.terms / stats.rows || 1;
  // The length normalisation split as LexicalIndex splits it, and each row's sum taken in the query's
  // order as it takes it: the same floating-point results.
  const norm0 = k1 * (1 - b);
  const norm1 = (k1 * b) / avgLength;
  const terms: string[] = [];
  const idfs: number[] = [];
  const counts: boolean[] = [];
  for (const [term, weight] of weights) {
    terms.push(term);
    idfs.push(weight * bm25Idf(stats.rows, df(term)));
    counts.push(original.has(term));
  }
  const out: Array<ScoredCandidate<T>> = [];
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
    if (sum > 0) {
      const scored = row as ScoredCandidate<T>;
      scored.score = sum * (covered || 1);
      out.push(scored);
    }
  }
  return out.sort((x, y) => y.score - x.score || x.seq - y.seq);
}

/**
 * The terms of the best `params.docs` results that {@link expandQuery} weighs, in order of first occurrence:
 * a store that counts document frequencies as it needs them counts these first.
 */
export function feedbackTerms(
  ranked: readonly ScoredCandidate[],
  weights: ReadonlyMap<string, number>,
  params: Readonly<FeedbackParams> = DEFAULT_FEEDBACK,
): string[] {
  const terms = new Set<string>();
  for (const r of ranked.slice(0, params.docs)) {
    for (const term of r.tf.keys()) if (!weights.has(term)) terms.add(term);
  }
  return [...terms];
}

/**
 * The feedback round's query (see {@link feedbackQuery}): each term of the best `params.docs` results that
 * the query lacks weighs tf × idf, times the result's share of the best score over its length, summed over
 * those results. Undefined when feedback is off or the results offer no term. `n` is the partition's size.
 */
export function expandQuery(
  ranked: readonly ScoredCandidate[],
  weights: ReadonlyMap<string, number>,
  n: number,
  df: (term: string) => number,
  params: Readonly<FeedbackParams> = DEFAULT_FEEDBACK,
): Map<string, number> | undefined {
  if (params.docs <= 0 || params.terms <= 0 || ranked.length === 0) return undefined;
  const best = ranked[0]!.score;
  if (!(best > 0)) return undefined;
  const candidates = new Map<string, number>();
  for (const r of ranked.slice(0, params.docs)) {
    if (r.length === 0) continue;
    const share = r.score / best / r.length;
    for (const [term, tf] of r.tf) {
      if (weights.has(term)) continue;
      candidates.set(term, (candidates.get(term) ?? 0) + share * tf * bm25Idf(n, df(term)));
    }
  }
  return feedbackQuery(weights, candidates, params);
}

/** A candidate round's query terms by rarity (see {@link termsByRarity}). */
export interface TermsByRarity {
  /** A feedback round: the weights hold terms the original query did not. */
  feedback: boolean;
  /** The round's terms the partition holds, rarest first (ties in code-unit order); a feedback round's new ones only. */
  present: string[];
  /** Their document frequencies summed: the rows holding any of them, at most. */
  postings: number;
  /** The rarest of them whose document frequencies sum to at most the round's budget. */
  rare: string[];
  /** The others. */
  common: string[];
  /** What a "rows holding a rare term and another" source anchors on: the rare terms, else the rarest common one. */
  anchor: string[];
}

/**
 * How the stores that find candidate rows in their own database (SQLite, PostgreSQL) split a round's terms:
 * the rare ones are read in full within `budget.match` postings (`budget.feedback` in the feedback round),
 * the common ones are sampled. Undefined when the partition holds none of the round's terms.
 */
export function termsByRarity(
  weights: ReadonlyMap<string, number>,
  original: ReadonlySet<string>,
  df: (term: string) => number,
  budget: { match: number; feedback: number },
): TermsByRarity | undefined {
  const feedback = [...weights.keys()].some((term) => !original.has(term));
  const present = [...weights.keys()]
    .filter((term) => df(term) > 0 && !(feedback && original.has(term)))
    .sort((a, b) => df(a) - df(b) || (a < b ? -1 : a > b ? 1 : 0));
  if (present.length === 0) return undefined;
  const postings = present.reduce((sum, term) => sum + df(term), 0);
  const limit = feedback ? budget.feedback : budget.match;
  const rare: string[] = [];
  let read = 0;
  for (const term of present) {
    if (read + df(term) > limit) break;
    rare.push(term);
    read += df(term);
  }
  const common = present.slice(rare.length);
  return { feedback, present, postings, rare, common, anchor: rare.length > 0 ? rare : common.slice(0, 1) };
}
