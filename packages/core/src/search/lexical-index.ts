import { CorruptDataError } from '../foundation/errors.js';
import { type Analyzer, englishAnalyzer } from './analyzer.js';
import {
  type Bm25Params,
  bm25Idf,
  DEFAULT_BM25,
  DEFAULT_FEEDBACK,
  type FeedbackParams,
  feedbackQuery,
} from './ranking.js';

export interface LexicalIndexOptions {
  analyzer?: Analyzer;
  bm25?: Partial<Bm25Params>;
  /** Query expansion from the top results; `false` turns it off. */
  feedback?: Partial<FeedbackParams> | false;
}

/**
 * An index's analysed texts as plain JSON data (see {@link LexicalIndex.exportState}): the distinct terms
 * once, and per text its id, length and (term number, frequency) pairs, flattened into one number array
 * `[length, pairs, term, tf, term, tf, …]` per text in `ids` order.
 */
export interface LexicalIndexState {
  format: 'kioku.lexical-index';
  version: 1;
  terms: string[];
  ids: string[];
  docs: number[];
}

export interface LexicalHit {
  id: string;
  score: number;
}

export interface LexicalSearchOptions {
  limit?: number;
  /** Keep only ids for which this returns true (applied before `limit`). */
  filter?: (id: string) => boolean;
}

/** One indexed text: its distinct terms with their frequencies, and its length in terms. */
interface Doc {
  id: string;
  terms: string[];
  tfs: number[];
  /** Per term (the order of `terms`): its posting's `id` and its frequency, flattened. */
  forward: Uint32Array;
  length: number;
}

/** Restored texts not unpacked yet: see LexicalIndex's `#packed`. */
interface Packed {
  terms: readonly string[];
  ids: readonly string[];
  docs: ArrayLike<number>;
  /** Where each slot's text starts in `docs`, or UNPACKED. */
  at: Uint32Array;
}

const UNPACKED = 0xffffffff;

/** The texts containing a term (by slot) and how often; parallel arrays, unordered. */
interface Posting {
  slots: number[];
  tfs: number[];
  /** No text holds the term more often (an upper bound: removals leave it as it was). */
  maxTf: number;
  /** A number of its own among the index's terms (restored terms keep their term numbers), reused once free. */
  id: number;
}

interface Scored {
  slot: number;
  score: number;
}

/**
 * An incremental BM25 index over short texts with Kioku's English analyzer for documents and queries.
 *
 * Ranking: BM25+ summed over the query terms, times the number of distinct query terms a text
 * matches (texts that cover more of the question come first; MiniSearch ranks the same way), then
 * one round of pseudo-relevance feedback (see {@link FeedbackParams}). Its parameters, idf and
 * feedback weighting are in `ranking.ts`, which scores the candidate rows SQL stores read by the same
 * rule (tested equal to this index's scores, bit for bit).
 *
 * The inverted index is this file's own rather than MiniSearch's (which Kioku used before): the same
 * scores, but scoring into a flat accumulator and keeping only the top results is several times
 * faster, which pays for the feedback round (tools/bench shows both side by side: recall is equal,
 * latency is not). Writes are incremental: `set` and `remove` touch only the postings of that text.
 */
export class LexicalIndex {
  readonly #analyzer: Analyzer;
  readonly #bm25: Bm25Params;
  readonly #feedback: FeedbackParams | undefined;
  readonly #postings = new Map<string, Posting>();
  readonly #slotOf = new Map<string, number>();
  readonly #docs: Array<Doc | undefined> = [];
  /**
   * Texts restored by `fromState` and not needed as Doc objects yet (most never are: scoring reads only
   * the postings and lengths): slot i is text i of `docs`, from `at[i]`, or UNPACKED once it has become a
   * Doc in `#docs`. Building 100,000 Doc objects up front was most of a restore (garbage collection).
   */
  #packed: Packed | undefined;
  readonly #free: number[] = [];
  /**
   * The last unfiltered search, ranked at least SHARED_DEPTH deep: a turn asks the same question twice
   * (fact recall and the memory manager search the user message, with different limits), and the best
   * `k` of a ranking are the first `k` of a deeper one (scores do not depend on the limit, ties go by
   * slot, and the feedback round reads only the best `feedback.docs`). Dropped by every change.
   */
  #last: { query: string; depth: number; hits: LexicalHit[] } | undefined;
  /** Length of the text in each slot, kept apart from the Doc objects so scoring reads one flat array. */
  #lengths = new Uint32Array(64);
  #totalLength = 0;
  /** No text is shorter (a lower bound: removals leave it as it was); bounds a term's score, see #rankPruned. */
  #minLength = Number.POSITIVE_INFINITY;
  // Scratch space for scoring, indexed by slot; reset after every query.
  #acc = new Float64Array(0);
  #covered = new Uint16Array(0);
  #seen = new Uint8Array(0);
  /** The slots a query touched, in the order it touched them (its first `count` entries). */
  #touched = new Uint32Array(0);
  /** Posting ids handed out (see Posting.id), and those free again. */
  #termIds = 0;
  readonly #freeTermIds: number[] = [];
  /** By posting id: 1 + the term's position in the query being scored (#rankPruned), else 0. */
  #queryMark = new Uint32Array(0);

  constructor(options: LexicalIndexOptions = {}) {
    this.#analyzer = options.analyzer ?? englishAnalyzer;
    this.#bm25 = { ...DEFAULT_BM25, ...options.bm25 };
    const feedback = options.feedback === false ? undefined : { ...DEFAULT_FEEDBACK, ...options.feedback };
    this.#feedback = feedback && feedback.docs > 0 && feedback.terms > 0 ? feedback : undefined;
  }

  /**
   * The analysed texts, to store and give to {@link LexicalIndex.fromState} later (another process, say):
   * rebuilding from it skips the analyzer, which is most of the cost of indexing. Only valid for an index
   * with the same analyzer.
   */
  exportState(): LexicalIndexState {
    const termNumber = new Map<string, number>();
    const ids: string[] = [];
    const docs: number[] = [];
    for (let slot = 0; slot < this.#docs.length; slot++) {
      const doc = this.#doc(slot, false);
      if (!doc) continue;
      ids.push(doc.id);
      docs.push(doc.length, doc.terms.length);
      for (let i = 0; i < doc.terms.length; i++) {
        const term = doc.terms[i]!;
        let n = termNumber.get(term);
        if (n === undefined) {
          n = termNumber.size;
          termNumber.set(term, n);
        }
        docs.push(n, doc.tfs[i]!);
      }
    }
    return { format: 'kioku.lexical-index', version: 1, terms: [...termNumber.keys()], ids, docs };
  }

  /**
   * An index holding what `state` describes (from {@link LexicalIndex.exportState}, made with the same
   * analyzer). `docs` may also be a `Uint32Array` (a compact encoding of the state can hand it over
   * without building a number array). Throws a CorruptDataError when `state` does not have that shape.
   */
  static fromState(state: unknown, options: LexicalIndexOptions = {}): LexicalIndex {
    const bad = (why: string) => new CorruptDataError(`Stored lexical index state is unusable: ${why}.`);
    const s = state as Partial<LexicalIndexState> | null;
    if (s?.format !== 'kioku.lexical-index' || s.version !== 1) throw bad('unknown format');
    const { terms, ids } = s;
    const docs: ArrayLike<number> | undefined = s.docs;
    if (
      !Array.isArray(terms) ||
      !Array.isArray(ids) ||
      !(Array.isArray(docs) || docs instanceof Uint32Array)
    ) {
      throw bad('missing arrays');
    }
    if (!terms.every((t) => typeof t === 'string')) throw bad('bad term');
    const index = new LexicalIndex(options);
    // Postings by term number, filled in slot order (a fresh index: text i goes into slot i). The texts
    // stay packed (see #packed).
    const postings: Posting[] = terms.map((_, id) => ({ slots: [], tfs: [], maxTf: 0, id }));
    index.#termIds = terms.length;
    const starts = new Uint32Array(ids.length);
    index.#lengths = new Uint32Array(Math.max(64, ids.length));
    let at = 0;
    for (let slot = 0; slot < ids.length; slot++) {
      const id = ids[slot];
      const length = docs[at];
      const count = docs[at + 1];
      if (typeof id !== 'string' || index.#slotOf.has(id)) throw bad('bad or repeated id');
      if (!Number.isInteger(length) || !Number.isInteger(count) || at + 2 + 2 * count! > docs.length) {
        throw bad('truncated texts');
      }
      starts[slot] = at;
      at += 2;
      for (let i = 0; i < count!; i++, at += 2) {
        const posting = postings[docs[at]!];
        const tf = docs[at + 1]!;
        if (!posting || !(tf > 0)) throw bad('bad term');
        posting.slots.push(slot);
        posting.tfs.push(tf);
        if (tf > posting.maxTf) posting.maxTf = tf;
      }
      index.#lengths[slot] = length!;
      if (length! < index.#minLength) index.#minLength = length!;
      index.#slotOf.set(id, slot);
      index.#totalLength += length!;
    }
    if (at !== docs.length) throw bad('trailing data');
    index.#docs.length = ids.length;
    // Copies: the caller may change its state afterwards.
    index.#packed = { terms: terms.slice(), ids: ids.slice(), docs: docs.slice(), at: starts };
    for (let n = 0; n < terms.length; n++) {
      if (index.#postings.has(terms[n]!)) throw bad('repeated term');
      if (postings[n]!.slots.length > 0) index.#postings.set(terms[n]!, postings[n]!);
      else index.#freeTermIds.push(n);
    }
    return index;
  }

  get size(): number {
    return this.#slotOf.size;
  }

  has(id: string): boolean {
    return this.#slotOf.has(id);
  }

  /** Index `text` under `id`, replacing what was indexed for that id before. */
  set(id: string, text: string): void {
    this.remove(id);
    this.#last = undefined;
    const counts = new Map<string, number>();
    let length = 0;
    for (const term of this.#analyzer.terms(text)) {
      counts.set(term, (counts.get(term) ?? 0) + 1);
      length += 1;
    }
    const terms = [...counts.keys()];
    const forward = new Uint32Array(2 * terms.length);
    this.#add({ id, terms, tfs: [...counts.values()], forward, length });
  }

  /**
   * Index terms the index's analyzer already made of a text (in order, repeats included) under `id`,
   * replacing what was indexed for that id before: what `set` does after analysing, for a store that keeps
   * the analysed terms (and updates an index restored by `fromState` with the rows changed since).
   * `length` is the text's length in terms when it differs from `terms.length` (as in a state's `docs`).
   */
  setTerms(id: string, terms: readonly string[], length = terms.length): void {
    this.remove(id);
    this.#last = undefined;
    const counts = new Map<string, number>();
    for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
    const distinct = [...counts.keys()];
    const forward = new Uint32Array(2 * distinct.length);
    this.#add({ id, terms: distinct, tfs: [...counts.values()], forward, length });
  }

  /**
   * The text in a slot (undefined when the slot is free), as a Doc: a packed one is unpacked, and kept as
   * a Doc unless `keep` is false.
   */
  #doc(slot: number, keep = true): Doc | undefined {
    const doc = this.#docs[slot];
    const packed = this.#packed;
    if (doc || !packed || slot >= packed.at.length || packed.at[slot] === UNPACKED) return doc;
    const { terms, ids, docs } = packed;
    let at = packed.at[slot]!;
    const count = docs[at + 1]!;
    const unpacked: Doc = {
      id: ids[slot]!,
      terms: new Array(count),
      tfs: new Array(count),
      forward: new Uint32Array(2 * count),
      length: docs[at]!,
    };
    at += 2;
    for (let i = 0; i < count; i++, at += 2) {
      unpacked.terms[i] = terms[docs[at]!]!;
      unpacked.tfs[i] = docs[at + 1]!;
      // A restored posting's id is its term number.
      unpacked.forward[2 * i] = docs[at]!;
      unpacked.forward[2 * i + 1] = docs[at + 1]!;
    }
    if (keep) {
      packed.at[slot] = UNPACKED;
      this.#docs[slot] = unpacked;
    }
    return unpacked;
  }

  /** The id in an occupied slot, without unpacking it. */
  #idOf(slot: number): string {
    return this.#docs[slot]?.id ?? this.#packed!.ids[slot]!;
  }

  /** Put an analysed text (whose id is not indexed) into a slot and the postings of its terms. */
  #add(doc: Doc): void {
    const slot = this.#free.pop() ?? this.#docs.length;
    this.#docs[slot] = doc;
    if (slot >= this.#lengths.length) {
      const grown = new Uint32Array(Math.max(this.#lengths.length * 2, slot + 1));
      grown.set(this.#lengths);
      this.#lengths = grown;
    }
    this.#lengths[slot] = doc.length;
    if (doc.length < this.#minLength) this.#minLength = doc.length;
    this.#slotOf.set(doc.id, slot);
    this.#totalLength += doc.length;
    for (let i = 0; i < doc.terms.length; i++) {
      const term = doc.terms[i]!;
      let posting = this.#postings.get(term);
      if (!posting) {
        posting = { slots: [], tfs: [], maxTf: 0, id: this.#freeTermIds.pop() ?? this.#termIds++ };
        this.#postings.set(term, posting);
      }
      doc.forward[2 * i] = posting.id;
      doc.forward[2 * i + 1] = doc.tfs[i]!;
      posting.slots.push(slot);
      posting.tfs.push(doc.tfs[i]!);
      if (doc.tfs[i]! > posting.maxTf) posting.maxTf = doc.tfs[i]!;
    }
  }

  remove(id: string): void {
    this.#last = undefined;
    const slot = this.#slotOf.get(id);
    if (slot === undefined) return;
    const doc = this.#doc(slot)!;
    for (const term of doc.terms) {
      const posting = this.#postings.get(term)!;
      const at = posting.slots.lastIndexOf(slot);
      const last = posting.slots.length - 1;
      posting.slots[at] = posting.slots[last]!;
      posting.tfs[at] = posting.tfs[last]!;
      posting.slots.pop();
      posting.tfs.pop();
      if (last === 0) {
        this.#postings.delete(term);
        this.#freeTermIds.push(posting.id);
      }
    }
    this.#totalLength -= doc.length;
    this.#docs[slot] = undefined;
    this.#slotOf.delete(id);
    if (this.#slotOf.size === 0) {
      // Empty again: drop the slot table instead of keeping a free list for it.
      this.#docs.length = 0;
      this.#free.length = 0;
      this.#packed = undefined;
      this.#minLength = Number.POSITIVE_INFINITY;
      this.#termIds = 0;
      this.#freeTermIds.length = 0;
    } else this.#free.push(slot);
  }

  /** Best matches first. A query with no indexable terms (only stop words, say) matches nothing. */
  search(query: string, options: LexicalSearchOptions = {}): LexicalHit[] {
    const limit = options.limit ?? this.size;
    if (options.filter) return this.#search(query, limit, options.filter);
    const last = this.#last;
    // A ranking cut at `depth` holds every hit when it came out shorter than that.
    if (last?.query === query && (limit <= last.depth || last.hits.length < last.depth)) {
      return last.hits.slice(0, limit).map((h) => ({ ...h }));
    }
    const depth = Math.max(limit, SHARED_DEPTH);
    const hits = this.#search(query, depth, undefined);
    this.#last = { query, depth, hits };
    return hits.slice(0, limit).map((h) => ({ ...h }));
  }

  #search(query: string, limit: number, filter: ((id: string) => boolean) | undefined): LexicalHit[] {
    const weights = new Map<string, number>();
    for (const term of this.#analyzer.terms(query)) weights.set(term, (weights.get(term) ?? 0) + 1);
    if (weights.size === 0 || this.size === 0) return [];
    const original = new Set(weights.keys());
    let ranked = this.#rank(
      weights,
      original,
      this.#feedback ? Math.max(limit, this.#feedback.docs) : limit,
      filter,
    );
    if (this.#feedback && ranked.length > 0) {
      const expanded = this.#expand(ranked, weights, this.#feedback);
      if (expanded) ranked = this.#rank(expanded, original, limit, filter);
    }
    const hits: LexicalHit[] = [];
    for (const r of ranked.slice(0, limit)) hits.push({ id: this.#idOf(r.slot), score: r.score });
    return hits;
  }

  /**
   * The best `limit` texts for weighted query terms: BM25+ per term times its weight, summed, times
   * the number of `original` terms matched (expansion terms add evidence but do not count as coverage).
   */
  #rank(
    weights: ReadonlyMap<string, number>,
    original: ReadonlySet<string>,
    limit: number,
    filter: ((id: string) => boolean) | undefined,
  ): Scored[] {
    const { k1, b } = this.#bm25;
    const n = this.size;
    const avgLength = this.#totalLength / n || 1;
    if (this.#acc.length < this.#docs.length) {
      const capacity = Math.max(64, this.#docs.length * 2);
      this.#acc = new Float64Array(capacity);
      this.#covered = new Uint16Array(capacity);
      this.#seen = new Uint8Array(capacity);
      this.#touched = new Uint32Array(capacity);
    }
    const norm0 = k1 * (1 - b);
    const norm1 = (k1 * b) / avgLength;
    const terms: QueryTerm[] = [];
    let postings = 0;
    for (const [term, weight] of weights) {
      const posting = this.#postings.get(term);
      if (!posting) continue;
      const idf = weight * bm25Idf(n, posting.slots.length);
      terms.push({ posting, idf, counts: original.has(term) ? 1 : 0, bound: 0 });
      postings += posting.slots.length;
    }
    if (!filter && limit > 0 && limit < n && postings >= PRUNE_MIN_POSTINGS && this.#prunable(terms)) {
      return this.#rankPruned(terms, limit, norm0, norm1);
    }
    const acc = this.#acc;
    const covered = this.#covered;
    const seen = this.#seen;
    const touched = this.#touched;
    let count = 0;
    for (const term of terms) count = this.#accumulate(term, count, norm0, norm1);
    const top = new TopK(limit);
    for (let j = 0; j < count; j++) {
      const slot = touched[j]!;
      const score = acc[slot]! * (covered[slot]! || 1);
      acc[slot] = 0;
      covered[slot] = 0;
      seen[slot] = 0;
      if (top.accepts(score, slot) && (!filter || filter(this.#idOf(slot)))) top.push(score, slot);
    }
    return top.sorted();
  }

  /** Whether a term's score has the upper bound #rankPruned relies on (default parameters: yes). */
  #prunable(terms: readonly QueryTerm[]): boolean {
    const { k1, b, d } = this.#bm25;
    if (!(k1 >= 0 && b >= 0 && b <= 1 && d >= 0 && Number.isFinite(this.#minLength))) return false;
    return terms.every((t) => t.idf >= 0 && Number.isFinite(t.idf));
  }

  /**
   * The same ranking as #rank's exhaustive loop, without scoring most texts that cannot reach the best
   * `limit` (MaxScore-style dynamic pruning). A term's contribution is at most its weighted idf times
   * BM25+ at the term's highest frequency and the shortest text; terms are read best bound first, and once
   * a text holding only the unread terms could not beat the `limit`-th best partial score, no new text is
   * taken. Every text still in reach is then scored exactly as the exhaustive loop scores it (its terms in
   * query order, the same floating-point operations), so scores, order and ties are identical.
   */
  #rankPruned(terms: QueryTerm[], limit: number, norm0: number, norm1: number): Scored[] {
    const { k1, d } = this.#bm25;
    const minLength = this.#minLength;
    for (const t of terms) {
      const tf = t.posting.maxTf;
      t.bound = t.idf * (d + (tf * (k1 + 1)) / (tf + norm0 + norm1 * minLength)) * SLACK_UP;
    }
    const order = terms
      .slice()
      .sort((x, y) => y.bound - x.bound || x.posting.slots.length - y.posting.slots.length);
    // What a text holding none of order[0..i) can score at most: restSum[i] times max(1, restCount[i]).
    const restSum = new Float64Array(order.length + 1);
    const restCount = new Uint16Array(order.length + 1);
    const restPostings = new Float64Array(order.length + 1);
    for (let i = order.length - 1; i >= 0; i--) {
      restSum[i] = restSum[i + 1]! + order[i]!.bound;
      restCount[i] = restCount[i + 1]! + order[i]!.counts;
      restPostings[i] = restPostings[i + 1]! + order[i]!.posting.slots.length;
    }
    const acc = this.#acc;
    const covered = this.#covered;
    const seen = this.#seen;
    const touched = this.#touched;
    const lengths = this.#lengths;
    let count = 0;
    let stop = order.length;
    for (let t = 0; t < order.length; t++) {
      // Worth checking when the postings left outweigh a pass over the texts touched so far.
      if (count >= limit && restPostings[t]! >= count * 4) {
        const newcomer = restSum[t]! * Math.max(1, restCount[t]!) * SLACK_UP;
        const kth = this.#kthPartial(count, limit) * SLACK_DOWN;
        if (
          newcomer < kth &&
          this.#reachWithin(count, restSum[t]!, restCount[t]!, kth, restPostings[t]! / EXACT_COST)
        ) {
          stop = t;
          break;
        }
      }
      count = this.#accumulate(order[t]!, count, norm0, norm1);
    }
    const theta = count >= limit ? this.#kthPartial(count, limit) * SLACK_DOWN : Number.NEGATIVE_INFINITY;
    const unreadSum = restSum[stop]!;
    const unreadCount = restCount[stop]!;
    if (this.#queryMark.length < this.#termIds) this.#queryMark = new Uint32Array(this.#termIds * 2);
    const mark = this.#queryMark;
    for (let q = 0; q < terms.length; q++) mark[terms[q]!.posting.id] = q + 1;
    const tfAt = new Float64Array(terms.length);
    const top = new TopK(limit);
    const exact = (slot: number): void => {
      this.#queryTfs(slot, tfAt);
      const length = lengths[slot]!;
      let sum = 0;
      let cover = 0;
      for (let q = 0; q < terms.length; q++) {
        const tf = tfAt[q]!;
        if (tf === 0) continue;
        tfAt[q] = 0;
        const term = terms[q]!;
        sum += term.idf * (d + (tf * (k1 + 1)) / (tf + norm0 + norm1 * length));
        cover += term.counts;
      }
      const score = sum * (cover || 1);
      if (top.accepts(score, slot)) top.push(score, slot);
    };
    // First the texts whose partial score already reaches theta (at least `limit` of them), so that the
    // kept scores rise early; then the others whose bound reaches the lowest kept score. When every term
    // was read, a partial score is the text's score up to rounding (the bound is partial × SLACK_UP), so
    // the first pass takes every text in reach and the second only clears the scratch space.
    const allRead = stop === order.length;
    const reachable = allRead ? theta * SLACK_DOWN : theta;
    for (let j = 0; j < count; j++) {
      const slot = touched[j]!;
      if (acc[slot]! * (covered[slot]! || 1) >= reachable) {
        exact(slot);
        seen[slot] = 2;
      }
    }
    if (allRead && count * DENSE_CLEAR > this.#docs.length) {
      const end = this.#docs.length;
      acc.fill(0, 0, end);
      covered.fill(0, 0, end);
      seen.fill(0, 0, end);
      for (const term of terms) mark[term.posting.id] = 0;
      return top.sorted();
    }
    for (let j = 0; j < count; j++) {
      const slot = touched[j]!;
      const partial = acc[slot]!;
      const cover = covered[slot]!;
      const done = seen[slot] === 2;
      acc[slot] = 0;
      covered[slot] = 0;
      seen[slot] = 0;
      if (done) continue;
      const bound = (partial + unreadSum) * Math.max(1, cover + unreadCount) * SLACK_UP;
      // Below the lowest kept exact score: the text cannot enter, not even on a tie.
      if (bound < theta || bound < top.floor()) continue;
      exact(slot);
    }
    for (const term of terms) mark[term.posting.id] = 0;
    return top.sorted();
  }

  /**
   * Whether fewer than `most` of the `count` texts touched so far could still reach `kth` if the unread
   * terms (`unreadSum`, `unreadCount`) were all theirs: the texts a stop here would score exactly, term by
   * term. Stops counting at `most`.
   */
  #reachWithin(count: number, unreadSum: number, unreadCount: number, kth: number, most: number): boolean {
    const acc = this.#acc;
    const covered = this.#covered;
    const touched = this.#touched;
    let reach = 0;
    for (let j = 0; j < count; j++) {
      const slot = touched[j]!;
      if ((acc[slot]! + unreadSum) * Math.max(1, covered[slot]! + unreadCount) * SLACK_UP >= kth) {
        if (++reach >= most) return false;
      }
    }
    return true;
  }

  /**
   * Add one query term's BM25+ contribution to the accumulator of every text in its posting list, noting
   * each text touched for the first time; returns the new count of touched texts. The one scoring loop of
   * both rankings, so the pruned one adds exactly what the exhaustive one adds.
   */
  #accumulate({ posting, idf, counts }: QueryTerm, count: number, norm0: number, norm1: number): number {
    const { k1, d } = this.#bm25;
    const acc = this.#acc;
    const covered = this.#covered;
    const seen = this.#seen;
    const touched = this.#touched;
    const lengths = this.#lengths;
    const { slots, tfs } = posting;
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i]!;
      const tf = tfs[i]!;
      if (seen[slot] === 0) {
        seen[slot] = 1;
        touched[count++] = slot;
      }
      acc[slot]! += idf * (d + (tf * (k1 + 1)) / (tf + norm0 + norm1 * lengths[slot]!));
      covered[slot]! += counts;
    }
    return count;
  }

  /** The `limit`-th best partial score among the touched texts (at least `limit` of them). */
  #kthPartial(count: number, limit: number): number {
    const acc = this.#acc;
    const covered = this.#covered;
    const touched = this.#touched;
    // A binary min-heap of the best `limit` partial scores.
    const heap = new Float64Array(limit);
    let size = 0;
    for (let j = 0; j < count; j++) {
      const slot = touched[j]!;
      const v = acc[slot]! * (covered[slot]! || 1);
      if (size < limit) {
        let i = size++;
        while (i > 0) {
          const parent = (i - 1) >> 1;
          if (heap[parent]! <= v) break;
          heap[i] = heap[parent]!;
          i = parent;
        }
        heap[i] = v;
      } else if (v > heap[0]!) {
        let i = 0;
        for (;;) {
          const l = 2 * i + 1;
          if (l >= size) break;
          const r = l + 1;
          const m = r < size && heap[r]! < heap[l]! ? r : l;
          if (heap[m]! >= v) break;
          heap[i] = heap[m]!;
          i = m;
        }
        heap[i] = v;
      }
    }
    return heap[0]!;
  }

  /** Writes into `tfAt[q]` the frequency in the text at `slot` of query term `q` (marked in #queryMark). */
  #queryTfs(slot: number, tfAt: Float64Array): void {
    const mark = this.#queryMark;
    const doc = this.#docs[slot];
    if (doc) {
      const forward = doc.forward;
      for (let i = 0; i < forward.length; i += 2) {
        const q = mark[forward[i]!]!;
        if (q > 0) tfAt[q - 1] = forward[i + 1]!;
      }
      return;
    }
    const { docs, at: starts } = this.#packed!;
    let at = starts[slot]!;
    const end = at + 2 + 2 * docs[at + 1]!;
    // A restored posting's id is its term number.
    for (at += 2; at < end; at += 2) {
      const q = mark[docs[at]!]!;
      if (q > 0) tfAt[q - 1] = docs[at + 1]!;
    }
  }

  /** The query with feedback terms added, or undefined when the top results offer none. */
  #expand(
    ranked: readonly Scored[],
    weights: ReadonlyMap<string, number>,
    params: FeedbackParams,
  ): Map<string, number> | undefined {
    const n = this.size;
    const best = ranked[0]!.score;
    if (!(best > 0)) return undefined;
    const candidates = new Map<string, number>();
    for (const r of ranked.slice(0, params.docs)) {
      const doc = this.#doc(r.slot)!;
      if (doc.length === 0) continue;
      const share = r.score / best / doc.length;
      for (let i = 0; i < doc.terms.length; i++) {
        const term = doc.terms[i]!;
        if (weights.has(term)) continue;
        const idf = bm25Idf(n, this.#postings.get(term)!.slots.length);
        candidates.set(term, (candidates.get(term) ?? 0) + share * doc.tfs[i]! * idf);
      }
    }
    return feedbackQuery(weights, candidates, params);
  }
}

/** A query term: its posting, weighted idf, whether it counts as coverage, and its score bound. */
interface QueryTerm {
  posting: Posting;
  idf: number;
  counts: number;
  bound: number;
}

/**
 * Below this many postings in all, a query is scored exhaustively: pruning's own work (bounds, a threshold,
 * scoring the candidates again term by term) costs more than it saves (measured: 10k LoCoMo-like facts,
 * ~3,000 postings a query, exhaustive 0.29 ms against 0.38 pruned; 100k facts, ~30,000, 2.07 against 1.18).
 */
const PRUNE_MIN_POSTINGS = 16_384;

/**
 * What scoring one text exactly costs (reading its terms: scattered memory), in postings read in order
 * (the accumulator loop). Pruning stops reading terms only when the texts left to score exactly cost less
 * than the postings it would skip: a query of common words expanded by feedback had touched ~8,500 of 100k
 * texts whose bounds all stayed in reach, and scoring them exactly took 7 ms where reading the remaining
 * ~56,000 postings takes under 1. Over 1,000 LoCoMo questions on the turn bench's 100k facts (limit 32, six
 * runs, each in a process of its own): search p95 3.1–4.6 → 2.2–3.3 ms, p99 5.7–7.2 → 3.2–5.2 ms; 16 did
 * as well, 48 and up lose part of what stopping early saves. Rankings identical. `pnpm bench:store --sizes
 * 100000 --adapter memory`: search p95 3.3–3.6 → 1.7 ms.
 */
const EXACT_COST = 32;

/**
 * Slack on the pruning bounds (#rankPruned), far above floating-point error: a bound is rounded up and a
 * threshold down by this much, so rounding can never prune a text that ties or beats the last kept one.
 */
const SLACK_UP = 1 + 1e-9;
const SLACK_DOWN = 1 - 1e-9;

/**
 * A query that touched more than 1 / DENSE_CLEAR of the slots clears its scratch space with one `fill`
 * per array (sequential) instead of slot by slot.
 */
const DENSE_CLEAR = 8;

/** How deep an unfiltered search ranks, whatever its limit, so that a second one can reuse it. */
const SHARED_DEPTH = 32;

/** Keeps the `k` best (score, slot) pairs: higher score first, then lower slot first (deterministic ties). */
class TopK {
  readonly #k: number;
  // A binary min-heap on (score, -slot): the root is the worst kept entry.
  readonly #heap: Scored[] = [];

  constructor(k: number) {
    this.#k = k;
  }

  static #worse(a: Scored, b: Scored): boolean {
    return a.score < b.score || (a.score === b.score && a.slot > b.slot);
  }

  /** The lowest score kept once `k` are kept (a score below it cannot enter), else -Infinity. */
  floor(): number {
    return this.#k > 0 && this.#heap.length >= this.#k ? this.#heap[0]!.score : Number.NEGATIVE_INFINITY;
  }

  /** Whether an entry would be kept (check this before costlier tests such as a filter). */
  accepts(score: number, slot: number): boolean {
    if (this.#k <= 0) return false;
    if (this.#heap.length < this.#k) return true;
    // TopK.#worse(root, { score, slot }) without making the entry: this runs for every scored text.
    const root = this.#heap[0]!;
    return root.score < score || (root.score === score && root.slot > slot);
  }

  push(score: number, slot: number): void {
    const heap = this.#heap;
    const entry = { score, slot };
    if (heap.length < this.#k) {
      heap.push(entry);
      let i = heap.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!TopK.#worse(heap[i]!, heap[parent]!)) break;
        const up = heap[i]!;
        heap[i] = heap[parent]!;
        heap[parent] = up;
        i = parent;
      }
      return;
    }
    heap[0] = entry;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && TopK.#worse(heap[l]!, heap[m]!)) m = l;
      if (r < heap.length && TopK.#worse(heap[r]!, heap[m]!)) m = r;
      if (m === i) break;
      const down = heap[i]!;
      heap[i] = heap[m]!;
      heap[m] = down;
      i = m;
    }
  }

  sorted(): Scored[] {
    return this.#heap.sort((a, b) => b.score - a.score || a.slot - b.slot);
  }
}
