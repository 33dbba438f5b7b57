import { type Embedder, ValidationError } from '@kioku/core';
import type OpenAI from 'openai';
import { createClient, env, type OpenAIClientOptions } from './client.js';
import { OpenAIEndpointError, wrapEndpointError } from './errors.js';

export interface OpenAIEmbedderOptions extends OpenAIClientOptions {
  /** Default `OPENAI_EMBEDDING_MODEL`, else `text-embedding-3-small`. */
  model?: string;
  /**
   * Vector length. Known for OpenAI's models; required for any other model (a local server's), so the
   * vector index can check it before anything is stored. Sent as the request's `dimensions` only to
   * the text-embedding-3 models, which support shortened vectors.
   */
  dimensions?: number;
  /** Inputs per request (default 512; OpenAI accepts up to 2048). */
  batchSize?: number;
}

const KNOWN_DIMENSIONS: Record<string, number> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
};

/**
 * Embeddings over any OpenAI-compatible `/embeddings` endpoint, in batches, order preserved; implements
 * core's `Embedder` (use it with the hybrid recall wrappers and a VectorIndex).
 */
export class OpenAIEmbedder implements Embedder {
  readonly client: OpenAI;
  readonly modelId: string;
  readonly dimensions: number;
  readonly maxBatchSize: number;
  readonly #requested: number | undefined;

  constructor(options: OpenAIEmbedderOptions = {}) {
    this.client = createClient(options);
    this.modelId = options.model ?? env('OPENAI_EMBEDDING_MODEL') ?? 'text-embedding-3-small';
    const dimensions = options.dimensions ?? KNOWN_DIMENSIONS[this.modelId];
    if (dimensions === undefined || !Number.isInteger(dimensions) || dimensions < 1) {
      throw new ValidationError(
        `Give \`dimensions\` for the embedding model "${this.modelId}" (its vector length is not known).`,
      );
    }
    this.dimensions = dimensions;
    this.#requested = this.modelId.startsWith('text-embedding-3') ? options.dimensions : undefined;
    this.maxBatchSize = options.batchSize ?? 512;
    if (!Number.isInteger(this.maxBatchSize) || this.maxBatchSize < 1 || this.maxBatchSize > 2048) {
      throw new ValidationError('batchSize must be an integer from 1 to 2048.');
    }
  }

  async embed(texts: readonly string[], options: { signal?: AbortSignal } = {}): Promise<number[][]> {
    const out: number[][] = [];
    for (let start = 0; start < texts.length; start += this.maxBatchSize) {
      const batch = texts.slice(start, start + this.maxBatchSize);
      let response: OpenAI.Embeddings.CreateEmbeddingResponse;
      try {
        response = await this.client.embeddings.create(
          {
            model: this.modelId,
            input: batch,
            encoding_format: 'float',
            ...(this.#requested === undefined ? {} : { dimensions: this.#requested }),
          },
          options.signal ? { signal: options.signal } : {},
        );
      } catch (error) {
        throw wrapEndpointError(error, 'The embeddings request', options.signal);
      }
      const vectors = [...response.data].sort((a, b) => a.index - b.index).map((d) => d.embedding);
      if (vectors.length !== batch.length) {
        throw new OpenAIEndpointError(
          `The embeddings endpoint returned ${vectors.length} vectors for ${batch.length} inputs.`,
          { failure: 'response' },
        );
      }
      for (const vector of vectors) {
        if (vector.length !== this.dimensions) {
          throw new OpenAIEndpointError(
            `The embeddings endpoint returned a ${vector.length}-dimensional vector; expected ${this.dimensions}.`,
            { failure: 'response' },
          );
        }
        out.push(vector);
      }
    }
    return out;
  }
}
