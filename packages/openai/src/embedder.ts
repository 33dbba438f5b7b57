import { ValidationError } from '@kioku/core';
import type OpenAI from 'openai';
import { createClient, env, type OpenAIClientOptions } from './client.js';
import { OpenAIEndpointError, wrapEndpointError } from './errors.js';

/**
 * What a vector index is fed with. Core has no `Embedder` contract yet, so this is the minimal shape
 * (model id, dimensions, `embed`); it will move to core unchanged.
 */
export interface Embedder {
  readonly modelId: string;
  /** Vector length; known up front for OpenAI's models, else learnt from the first reply. */
  readonly dimensions: number | undefined;
  embed(texts: readonly string[], options?: { signal?: AbortSignal }): Promise<number[][]>;
}

export interface OpenAIEmbedderOptions extends OpenAIClientOptions {
  /** Default `OPENAI_EMBEDDING_MODEL`, else `text-embedding-3-small`. */
  model?: string;
  /** Requested vector length (sent as `dimensions`, which the text-embedding-3 models support). */
  dimensions?: number;
  /** Inputs per request (default 512; OpenAI accepts up to 2048). */
  batchSize?: number;
}

const KNOWN_DIMENSIONS: Record<string, number> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
};

/** Embeddings over any OpenAI-compatible `/embeddings` endpoint, in batches, order preserved. */
export class OpenAIEmbedder implements Embedder {
  readonly client: OpenAI;
  readonly modelId: string;
  readonly #requested: number | undefined;
  readonly #batchSize: number;
  #dimensions: number | undefined;

  constructor(options: OpenAIEmbedderOptions = {}) {
    this.client = createClient(options);
    this.modelId = options.model ?? env('OPENAI_EMBEDDING_MODEL') ?? 'text-embedding-3-small';
    this.#requested = options.dimensions;
    this.#dimensions = options.dimensions ?? KNOWN_DIMENSIONS[this.modelId];
    this.#batchSize = options.batchSize ?? 512;
    if (!Number.isInteger(this.#batchSize) || this.#batchSize < 1 || this.#batchSize > 2048) {
      throw new ValidationError('batchSize must be an integer from 1 to 2048.');
    }
  }

  get dimensions(): number | undefined {
    return this.#dimensions;
  }

  async embed(texts: readonly string[], options: { signal?: AbortSignal } = {}): Promise<number[][]> {
    const out: number[][] = [];
    for (let start = 0; start < texts.length; start += this.#batchSize) {
      const batch = texts.slice(start, start + this.#batchSize);
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
        this.#dimensions ??= vector.length;
        if (vector.length !== this.#dimensions) {
          throw new OpenAIEndpointError(
            `The embeddings endpoint returned a ${vector.length}-dimensional vector; expected ${this.#dimensions}.`,
            { failure: 'response' },
          );
        }
        out.push(vector);
      }
    }
    return out;
  }
}
