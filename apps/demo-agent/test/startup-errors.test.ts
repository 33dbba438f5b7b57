import { StorageError, ValidationError } from '@kioku/core';
import { describe, expect, it } from 'vitest';
import { startupEmbeddingError } from '../src/startup-errors.js';

describe('the start-up embedding step blames the right thing', () => {
  it('passes a bad user id on as it is, without blaming the embedding model', () => {
    const bad = new ValidationError('Invalid scope: userId: may contain only letters…');
    expect(startupEmbeddingError(bad, 'text-embedding-3-small', undefined)).toBe(bad);
  });

  it('names the endpoint when it cannot be reached, and the way out', () => {
    const down = new StorageError('Embeddings request failed: connect ECONNREFUSED 127.0.0.1:11434');
    const message = startupEmbeddingError(down, 'nomic-embed-text', 'http://127.0.0.1:11434/v1').message;
    expect(message).toContain('nomic-embed-text at http://127.0.0.1:11434/v1');
    expect(message).toContain('--embeddings off');
  });

  it('names --embedding-dimensions and --embeddings off for a vector of the wrong size', () => {
    const size = new ValidationError(
      'The embeddings endpoint returned a 64-dimensional vector; expected 1536.',
    );
    const message = startupEmbeddingError(size, 'tiny', 'http://x/v1').message;
    expect(message).toContain('64-dimensional vector; expected 1536');
    expect(message).toContain('--embedding-dimensions <n>');
    expect(message).toContain('--embeddings off');
  });
});
