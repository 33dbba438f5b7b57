import { ValidationError } from '../../foundation/errors.js';
import { type Analyzer, englishAnalyzer } from '../../search/analyzer.js';
import type { Embedder, EmbedOptions } from './embedder.js';

export interface HashingEmbedderOptions {
  /** Vector size (default 256). */
  dimensions?: number;
  /** Length of the character n-grams taken from every term (default 3; 0 = terms only). */
  ngram?: number;
  /** Weight of an n-gram feature relative to a whole term (default 0.5). */
  ngramWeight?: number;
  /** Texts per `embed` call (default 256; batching only matters for remote models). */
  maxBatchSize?: number;
  /** How texts become terms (default: Kioku's English analyzer, the one lexical search uses). */
  analyzer?: Analyzer;
}

/** FNV-1a, 32 bits. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** A second, independent bit for the sign (murmur3's finaliser on the hash). */
function signOf(hash: number): 1 | -1 {
  let h = hash;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h & 1 ? 1 : -1;
}

/**
 * A deterministic, offline embedder for tests and for running without a model: **lexical, not
 * semantic**. Each text is analysed like lexical search does it (lower-case, stop words out, stemmed),
 * and its terms plus their character n-grams (`#run`, `run`, `un#` …, which relate "runner" to "running"
 * and survive typos) are feature-hashed into `dimensions` buckets with a hashed sign (the "hashing
 * trick"), weighted 1 + ln(tf), then L2-normalised. Two texts are similar when they share words or
 * word pieces; synonyms ("car" / "automobile") are not related at all. A text with no terms gets the
 * zero vector, which is similar to nothing.
 *
 * The same input always gives the same vector, in any process, so stored vectors stay valid across
 * restarts; `modelId` encodes every setting (`kioku-hashing-v1:d256:n3:w0.5`).
 */
export class HashingEmbedder implements Embedder {
  readonly modelId: string;
  readonly dimensions: number;
  /**
   * Its ranking is a blurred copy of lexical search's, so it weighs little in hybrid recall: on LoCoMo's
   * conversations 0–4, RRF weights 1, 0.5, 0.25 and 0.1 all ranked below lexical search alone; 0.01 had the
   * best R@5 + R@10 of those that did not (tools/bench, `bench:recall --embedder hashing`).
   */
  readonly fusionWeight = 0.01;
  readonly maxBatchSize: number;
  readonly #ngram: number;
  readonly #ngramWeight: number;
  readonly #analyzer: Analyzer;

  constructor(options: HashingEmbedderOptions = {}) {
    this.dimensions = options.dimensions ?? 256;
    this.#ngram = options.ngram ?? 3;
    this.#ngramWeight = options.ngramWeight ?? 0.5;
    this.maxBatchSize = options.maxBatchSize ?? 256;
    this.#analyzer = options.analyzer ?? englishAnalyzer;
    if (!Number.isInteger(this.dimensions) || this.dimensions < 2 || this.dimensions > 16_384) {
      throw new ValidationError('HashingEmbedder dimensions must be an integer from 2 to 16384.');
    }
    if (!Number.isInteger(this.#ngram) || this.#ngram < 0 || this.#ngram > 8) {
      throw new ValidationError('HashingEmbedder ngram must be an integer from 0 to 8.');
    }
    if (!(this.#ngramWeight >= 0) || !Number.isFinite(this.#ngramWeight)) {
      throw new ValidationError('HashingEmbedder ngramWeight must be a finite number of at least 0.');
    }
    if (!Number.isInteger(this.maxBatchSize) || this.maxBatchSize < 1) {
      throw new ValidationError('HashingEmbedder maxBatchSize must be a positive integer.');
    }
    const analyzer = options.analyzer ? ':custom' : '';
    this.modelId = `kioku-hashing-v1:d${this.dimensions}:n${this.#ngram}:w${this.#ngramWeight}${analyzer}`;
  }

  async embed(texts: readonly string[], options: EmbedOptions = {}): Promise<number[][]> {
    options.signal?.throwIfAborted();
    return texts.map((text) => this.embedOne(text));
  }

  /** The vector of one text (synchronous; `embed` is this over a batch). */
  embedOne(text: string): number[] {
    const counts = new Map<string, number>();
    const add = (feature: string) => counts.set(feature, (counts.get(feature) ?? 0) + 1);
    for (const term of this.#analyzer.terms(text)) {
      add(`t:${term}`);
      if (this.#ngram > 0 && this.#ngramWeight > 0) {
        const padded = `#${term}#`;
        if (padded.length <= this.#ngram) add(`g:${padded}`);
        else
          for (let i = 0; i + this.#ngram <= padded.length; i++) add(`g:${padded.slice(i, i + this.#ngram)}`);
      }
    }
    const vector = new Array<number>(this.dimensions).fill(0);
    for (const [feature, tf] of counts) {
      const weight = (feature.startsWith('t:') ? 1 : this.#ngramWeight) * (1 + Math.log(tf));
      const hash = fnv1a(feature);
      vector[hash % this.dimensions]! += signOf(hash) * weight;
    }
    let norm = 0;
    for (const x of vector) norm += x * x;
    if (norm === 0) return vector;
    const scale = 1 / Math.sqrt(norm);
    return vector.map((x) => x * scale);
  }
}
