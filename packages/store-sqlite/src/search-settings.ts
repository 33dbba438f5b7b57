// The search options a user passes, kept apart from search.ts so the published types never import drizzle-orm.

/**
 * How search results are ordered.
 * - `kioku` (default): FTS5 gathers candidate rows (all matches when they are few; see `#gather`), which
 *   are then scored exactly as core's LexicalIndex scores them (BM25+ with k1 1.2, b 0.5, d 1, times the
 *   number of query terms matched, then one round of pseudo-relevance feedback), with statistics of the
 *   caller's partition only. On LoCoMo this gives core's recall to two decimals.
 * - `bm25`: FTS5's `bm25()` order as it is (k1 1.2, b 0.75, statistics of the whole table): one query,
 *   cheaper, a few points of recall lower.
 */
export type Ranking = 'kioku' | 'bm25';

export interface SearchSettings {
  ranking: Ranking;
  /** Rows each candidate source hands to the `kioku` ranking: this many (default 100), at least 4× the limit. */
  candidates: number;
}

export const DEFAULT_SEARCH: Readonly<SearchSettings> = Object.freeze({ ranking: 'kioku', candidates: 100 });
