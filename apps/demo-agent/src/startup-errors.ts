import { isKiokuError } from '@kioku/core';
import { describeError } from './chat.js';

/**
 * What went wrong when the memory was embedded at start, blaming the right thing: a bad user id or a store
 * error is passed on as it is; an unreachable endpoint is named; a vector of the wrong size names the flags
 * that fix it.
 */
export function startupEmbeddingError(error: unknown, model: string, baseURL: string | undefined): Error {
  const message = describeError(error);
  const endpoint = baseURL ?? 'https://api.openai.com/v1';
  if (/-dimensional vector; expected \d+/.test(message)) {
    return new Error(
      `The embedding model ${model} at ${endpoint}: ${message} Pass its size with --embedding-dimensions <n> ` +
        '(or OPENAI_EMBEDDING_DIMENSIONS), or run with --embeddings off.',
      { cause: error },
    );
  }
  if (isKiokuError(error) && ['VALIDATION', 'SCOPE', 'NOT_FOUND', 'CORRUPT_DATA'].includes(error.code)) {
    return error;
  }
  return new Error(
    `Embedding your memory at start with ${model} at ${endpoint} failed (${message}). Check that the endpoint ` +
      'is up and serves that model, or run with --embeddings off.',
    { cause: error },
  );
}
