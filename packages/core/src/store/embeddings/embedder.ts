import { KiokuError, type KiokuErrorOptions, StorageError } from '../../foundation/errors.js';

export interface EmbedOptions {
  /** Aborts the request; `embed` then rejects with the signal's reason. */
  signal?: AbortSignal;
}

/**
 * Turns texts into vectors. Implementations wrap a model (an OpenAI-compatible endpoint, a local model)
 * or, like {@link HashingEmbedder}, compute vectors without one.
 *
 * `modelId` names the model and every setting that changes its vectors (a different `modelId` means
 * vectors that must not be compared with the old ones); it is recorded with every stored vector.
 */
export interface Embedder {
  readonly modelId: string;
  readonly dimensions: number;
  /**
   * The most texts one `embed` call accepts; {@link embedTexts} splits larger inputs into batches of this
   * size. Leave it out when `embed` batches by itself (it then gets every text at once).
   */
  readonly maxBatchSize?: number | undefined;
  /**
   * How much this model's ranking weighs against lexical search's (1) when hybrid recall fuses them,
   * measured for the model (`bench:recall --embedder`); without it, `HYBRID_DEFAULTS.vectorWeight`.
   */
  readonly fusionWeight?: number | undefined;
  /** One vector of `dimensions` finite numbers per text, in order. At most `maxBatchSize` texts. */
  embed(texts: readonly string[], options?: EmbedOptions): Promise<number[][]>;
}

/**
 * Embed any number of texts in batches of the embedder's `maxBatchSize`, one batch at a time, checking
 * the signal between batches and every answer: a wrong count, dimension or a non-finite number is a
 * StorageError (the embedder misbehaved), never a vector stored.
 */
export async function embedTexts(
  embedder: Embedder,
  texts: readonly string[],
  options: EmbedOptions = {},
): Promise<number[][]> {
  const batchSize =
    embedder.maxBatchSize === undefined
      ? Math.max(1, texts.length)
      : Math.max(1, Math.floor(embedder.maxBatchSize));
  const out: number[][] = [];
  for (let start = 0; start < texts.length; start += batchSize) {
    options.signal?.throwIfAborted();
    const batch = texts.slice(start, start + batchSize);
    const vectors = await embedder.embed(batch, options.signal ? { signal: options.signal } : {});
    if (!Array.isArray(vectors) || vectors.length !== batch.length) {
      throw new StorageError(
        `Embedder "${embedder.modelId}" returned ${Array.isArray(vectors) ? vectors.length : 'no'} vectors for ${batch.length} texts.`,
        { details: { modelId: embedder.modelId, expected: batch.length } },
      );
    }
    for (const vector of vectors) {
      if (
        !Array.isArray(vector) ||
        vector.length !== embedder.dimensions ||
        !vector.every((x) => Number.isFinite(x))
      ) {
        throw new StorageError(
          `Embedder "${embedder.modelId}" returned a vector that is not ${embedder.dimensions} finite numbers.`,
          { details: { modelId: embedder.modelId, dimensions: embedder.dimensions } },
        );
      }
      out.push(vector);
    }
  }
  options.signal?.throwIfAborted();
  return out;
}

/**
 * The vectors stored for a scope were made by another embedding model (or have another dimension)
 * than the configured embedder's. Nothing was searched or written: run `reembed()` for the scope (or
 * all users) to rebuild the vectors with the configured model. Code `CONFLICT`.
 */
export class EmbeddingModelMismatchError extends KiokuError {
  constructor(message: string, options?: KiokuErrorOptions) {
    super('CONFLICT', message, options);
  }
}
