import MiniSearch from 'minisearch';
import { type Analyzer, englishAnalyzer } from './analyzer.js';

export interface Bm25Params {
  /** Term-frequency saturation. */
  k1: number;
  /** Length normalisation (0 = none, 1 = full). */
  b: number;
  /** BM25+ lower bound added to every matching term's score. */
  d: number;
}

export interface LexicalIndexOptions {
  analyzer?: Analyzer;
  bm25?: Partial<Bm25Params>;
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

export const DEFAULT_BM25: Readonly<Bm25Params> = Object.freeze({ k1: 1.2, b: 0.75, d: 0.5 });

interface IndexedText {
  id: string;
  text: string;
}

/**
 * An incremental BM25 index over short texts, built on MiniSearch (inverted index, BM25+ ranking,
 * add/discard without rebuilding) with Kioku's English analyzer for both documents and queries.
 */
export class LexicalIndex {
  readonly #mini: MiniSearch<IndexedText>;
  readonly #analyzer: Analyzer;

  constructor(options: LexicalIndexOptions = {}) {
    const analyzer = options.analyzer ?? englishAnalyzer;
    const bm25 = { ...DEFAULT_BM25, ...options.bm25 };
    this.#analyzer = analyzer;
    this.#mini = new MiniSearch<IndexedText>({
      fields: ['text'],
      storeFields: [],
      // The analyzer does all the work; MiniSearch's own term processing is bypassed.
      tokenize: (text) => analyzer.terms(text),
      processTerm: (term) => term,
      searchOptions: { combineWith: 'OR', bm25: { k: bm25.k1, b: bm25.b, d: bm25.d } },
      autoVacuum: { minDirtCount: 200, minDirtFactor: 0.2, batchSize: 1000, batchWait: 0 },
    });
  }

  get size(): number {
    return this.#mini.documentCount;
  }

  has(id: string): boolean {
    return this.#mini.has(id);
  }

  /** Index `text` under `id`, replacing what was indexed for that id before. */
  set(id: string, text: string): void {
    if (this.#mini.has(id)) this.#mini.discard(id);
    this.#mini.add({ id, text });
  }

  remove(id: string): void {
    if (this.#mini.has(id)) this.#mini.discard(id);
  }

  /** Best matches first. A query with no indexable terms (only stop words, say) matches nothing. */
  search(query: string, options: LexicalSearchOptions = {}): LexicalHit[] {
    if (this.#analyzer.terms(query).length === 0) return [];
    const results = this.#mini.search(query, options.filter ? { filter: (r) => options.filter!(r.id) } : {});
    const limit = options.limit ?? results.length;
    const hits: LexicalHit[] = [];
    for (const r of results) {
      if (hits.length >= limit) break;
      hits.push({ id: r.id as string, score: r.score });
    }
    return hits;
  }
}
