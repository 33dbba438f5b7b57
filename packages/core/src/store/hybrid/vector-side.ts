import { type Clock, systemClock } from '../../foundation/clock.js';
import type { Metadata } from '../../foundation/record-fields.js';
import type { Scope } from '../../foundation/scope.js';
import { type Embedder, EmbeddingModelMismatchError, embedTexts } from '../embeddings/embedder.js';
import { InMemoryVectorIndex } from '../vector/memory.js';
import type { VectorHit, VectorQuery } from '../vector/record.js';
import type { VectorIndex } from '../vector/store.js';
import { RRF_K } from './fusion.js';

/** How a store's records get vectors and how its search fuses them with lexical results. */
export interface HybridOptions {
  /**
   * The embedder. Without one there is no vector side: `with…Embeddings` returns the store as it is
   * (lexical search alone) and transcript search is lexical.
   */
  embedder?: Embedder | undefined;
  /** Where the vectors live (default: a new InMemoryVectorIndex of the embedder's dimensions). */
  index?: VectorIndex;
  /** RRF constant (default 60, see `RRF_K`). */
  rrfK?: number;
  /**
   * Weights of the two rankings in the fusion (weighted RRF). Default: lexical 1, vector the embedder's
   * `fusionWeight`, else `HYBRID_DEFAULTS.vectorWeight`. A vector side that ranks worse than lexical search
   * should weigh less: at equal weight it can pull lexical's best hits down.
   */
  weights?: { lexical?: number; vector?: number };
  /**
   * How many results each side (lexical, vector) contributes before fusion; default
   * `max(20, 3 × limit)`, at most 1000.
   */
  candidates?: number;
  /**
   * Vector hits below this cosine similarity are left out before fusion (default 0.1): near-orthogonal
   * vectors are unrelated texts, and ranking them would only add noise to the fused list.
   */
  minVectorScore?: number;
  /** Characters of a text that are embedded, the rest is cut (default 8000; models have input limits). */
  maxTextChars?: number;
  /**
   * How long a successful model check of one scope and kind is trusted before `models()` is asked again
   * (default 5000 ms; 0 = every operation). See `EmbeddingModelMismatchError`.
   */
  modelCheckTtlMs?: number;
  /** Time source of that cache (default the system clock). */
  clock?: Clock;
}

/** One vector to write: its id, the text it is embedded from, and the payload stored beside it. */
export interface VectorEntry {
  id: string;
  text: string;
  payload: Metadata;
}

export const HYBRID_DEFAULTS = Object.freeze({
  minVectorScore: 0.1,
  maxTextChars: 8_000,
  modelCheckTtlMs: 5_000,
  minCandidates: 20,
  candidateFactor: 3,
  maxCandidates: 1_000,
  /**
   * The vector side's weight when the embedder declares none: a real small sentence encoder (Universal
   * Sentence Encoder Lite) measured best at 0.25 on LoCoMo's conversations 0–4 (+2.2 R@10 over lexical
   * alone), and lost to lexical alone at equal weight (−2.8).
   */
  vectorWeight: 0.25,
});

/** The vector half of hybrid recall: model checks, embedding, writes and queries for one store kind. */
export class VectorSide {
  readonly kind: string;
  readonly embedder: Embedder;
  readonly index: VectorIndex;
  readonly rrfK: number;
  /** The fusion's settings: RRF `k` and the weights of the lexical and the vector ranking, in that order. */
  readonly fusion: { k: number; weights: [number, number] };
  readonly #candidates: number | undefined;
  readonly #minScore: number;
  readonly #maxTextChars: number;
  readonly #ttl: number;
  readonly #clock: Clock;
  /** Scopes whose stored model was verified, until when. */
  readonly #verified = new Map<string, number>();

  constructor(kind: string, embedder: Embedder, options: HybridOptions) {
    this.kind = kind;
    this.embedder = embedder;
    this.index = options.index ?? new InMemoryVectorIndex({ dimensions: embedder.dimensions });
    this.rrfK = options.rrfK ?? RRF_K;
    this.fusion = {
      k: this.rrfK,
      weights: [
        options.weights?.lexical ?? 1,
        options.weights?.vector ?? embedder.fusionWeight ?? HYBRID_DEFAULTS.vectorWeight,
      ],
    };
    this.#candidates = options.candidates;
    this.#minScore = options.minVectorScore ?? HYBRID_DEFAULTS.minVectorScore;
    this.#maxTextChars = options.maxTextChars ?? HYBRID_DEFAULTS.maxTextChars;
    this.#ttl = options.modelCheckTtlMs ?? HYBRID_DEFAULTS.modelCheckTtlMs;
    this.#clock = options.clock ?? systemClock;
    if (embedder.dimensions !== this.index.dimensions) {
      throw new EmbeddingModelMismatchError(
        `Embedder "${embedder.modelId}" makes ${embedder.dimensions}-dimensional vectors; the vector index holds ${this.index.dimensions}-dimensional ones. Use an index of ${embedder.dimensions} dimensions (a new collection) and run reembed().`,
        {
          details: {
            kind,
            model: embedder.modelId,
            dimensions: embedder.dimensions,
            indexDimensions: this.index.dimensions,
          },
        },
      );
    }
  }

  /** How many candidates each side contributes for a result of `limit`. */
  candidates(limit: number): number {
    const wanted =
      this.#candidates ?? Math.max(HYBRID_DEFAULTS.minCandidates, HYBRID_DEFAULTS.candidateFactor * limit);
    return Math.min(HYBRID_DEFAULTS.maxCandidates, Math.max(limit, wanted));
  }

  /**
   * Throws EmbeddingModelMismatchError when the scope holds vectors of this kind that another model
   * made (or that carry no model): they must be rebuilt with `reembed()`, never ranked beside ours.
   */
  async ensureModel(scope: Scope): Promise<void> {
    const key = JSON.stringify([scope.userId, scope.agentId ?? null]);
    const until = this.#verified.get(key);
    const now = this.#clock.now();
    if (until !== undefined && until > now) return;
    const models = await this.index.models(scope, { kind: this.kind });
    const foreign = models.filter((m) => m.model !== this.embedder.modelId);
    if (foreign.length > 0) {
      this.#verified.delete(key);
      const found = foreign.map((m) => `${m.model ?? '(no model)'} × ${m.count}`).join(', ');
      throw new EmbeddingModelMismatchError(
        `The ${this.kind} vectors of this scope were made by another embedding model (${found}); the configured model is "${this.embedder.modelId}". Run reembed() to rebuild them.`,
        { details: { kind: this.kind, model: this.embedder.modelId, found: foreign } },
      );
    }
    if (this.#ttl > 0) {
      this.#verified.set(key, now + this.#ttl);
      if (this.#verified.size > 10_000) this.#verified.delete(this.#verified.keys().next().value!);
    }
  }

  /** Forget the cached model checks (after a reembed or restore). */
  resetModelChecks(): void {
    this.#verified.clear();
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<number[][]> {
    const cut = texts.map((t) => (t.length > this.#maxTextChars ? t.slice(0, this.#maxTextChars) : t));
    return embedTexts(this.embedder, cut, signal ? { signal } : {});
  }

  /** Embed and upsert entries (after the model check), labelled with the embedder's model. */
  async write(scope: Scope, entries: VectorEntry[], options: { signal?: AbortSignal } = {}): Promise<number> {
    if (entries.length === 0) return 0;
    await this.ensureModel(scope);
    const vectors = await this.embed(
      entries.map((e) => e.text),
      options.signal,
    );
    // Big inputs (long documents, reembed) go to the index in slices, as requests to a server should.
    const slice = 256;
    for (let start = 0; start < entries.length; start += slice) {
      await this.index.upsert(
        scope,
        entries.slice(start, start + slice).map((entry, i) => ({
          id: entry.id,
          kind: this.kind,
          vector: vectors[start + i]!,
          payload: entry.payload,
          model: this.embedder.modelId,
        })),
      );
    }
    return entries.length;
  }

  /** Nearest vectors of this kind to `text`; none when the text embeds to the zero vector. */
  async search(
    scope: Scope,
    text: string,
    limit: number,
    filter?: VectorQuery['filter'],
  ): Promise<VectorHit[]> {
    await this.ensureModel(scope);
    const [vector] = await this.embed([text]);
    if (!vector?.some((x) => x !== 0)) return [];
    return this.index.search(scope, {
      vector,
      limit,
      kind: this.kind,
      minScore: this.#minScore,
      ...(filter && Object.keys(filter).length > 0 ? { filter } : {}),
    });
  }

  async remove(scope: Scope, ids: string[]): Promise<number> {
    return ids.length === 0 ? 0 : this.index.delete(scope, ids);
  }

  /**
   * Drop vectors whose record is gone (deleted through another store instance, evicted from a
   * transcript). Best effort: a failure here never fails the search that noticed them.
   */
  async forget(scope: Scope, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.index.delete(scope, ids).catch(() => undefined);
  }
}

/** Only string, integer and boolean payload values can be filtered on; leave out what is undefined. */
export function filterOf(
  values: Record<string, string | number | boolean | undefined>,
): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(values)) if (value !== undefined) out[key] = value;
  return out;
}
