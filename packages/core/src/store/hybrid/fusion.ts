/**
 * The `k` of reciprocal rank fusion: each list adds `1 / (k + rank)` (rank 1 = best) for every item it
 * holds. 60 is the constant of Cormack, Clarke & Büttcher (SIGIR 2009), used by Elasticsearch, OpenSearch
 * and Qdrant alike: large enough that the first few ranks of one list do not drown the other list, small
 * enough that rank still matters.
 */
export const RRF_K = 60;

export interface RankedItem<T> {
  /** Identity across lists (a record id, `docId#chunk` …). */
  key: string;
  item: T;
}

export interface FusedItem<T> extends RankedItem<T> {
  /** Sum of `weight / (k + rank)` over the lists that hold the item. */
  score: number;
  /** The item's 1-based rank in each list, `undefined` where a list does not hold it. */
  ranks: Array<number | undefined>;
}

/**
 * Reciprocal rank fusion (RRF) of ranked lists: scores depend only on ranks, so lists whose scores are
 * not comparable (BM25 and cosine) fuse without calibration. `weights` (one per list, default 1 each)
 * scale each list's `1 / (k + rank)`: weighted RRF, for lists that are not equally good. Ties go to the
 * item with the better best rank, then to the order the items were first seen (lists in order).
 * Duplicate keys within one list count once, at their first rank; the item kept is the one from the
 * first list that holds the key.
 */
export function reciprocalRankFusion<T>(
  lists: ReadonlyArray<ReadonlyArray<RankedItem<T>>>,
  options: { k?: number; weights?: readonly number[] } = {},
): FusedItem<T>[] {
  const k = options.k ?? RRF_K;
  if (!(k >= 0) || !Number.isFinite(k)) throw new RangeError('RRF k must be a finite number of at least 0');
  const weights = options.weights ?? lists.map(() => 1);
  if (weights.length !== lists.length || !weights.every((w) => w >= 0 && Number.isFinite(w))) {
    throw new RangeError('RRF weights must be one finite number of at least 0 per list');
  }
  const fused = new Map<string, FusedItem<T> & { best: number; order: number }>();
  lists.forEach((list, listIndex) => {
    const seen = new Set<string>();
    let rank = 0;
    for (const { key, item } of list) {
      if (seen.has(key)) continue;
      seen.add(key);
      rank++;
      let entry = fused.get(key);
      if (!entry) {
        entry = { key, item, score: 0, ranks: lists.map(() => undefined), best: rank, order: fused.size };
        fused.set(key, entry);
      }
      entry.score += weights[listIndex]! / (k + rank);
      entry.ranks[listIndex] = rank;
      entry.best = Math.min(entry.best, rank);
    }
  });
  return [...fused.values()]
    .sort((a, b) => b.score - a.score || a.best - b.best || a.order - b.order)
    .map(({ best: _best, order: _order, ...item }) => item);
}
