import { describe, expect, it } from 'vitest';
import { type Embedder, HashingEmbedder, isKiokuError } from '../src/index.js';
import { embedTexts } from '../src/store/embeddings/embedder.js';

const cosine = (a: number[], b: number[]) => {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
};

describe('HashingEmbedder', () => {
  const embedder = new HashingEmbedder();

  it('makes unit vectors of the configured size, the same in every call', async () => {
    const [a, b] = await embedder.embed(['User prefers dark mode', 'User prefers dark mode']);
    expect(a).toHaveLength(256);
    expect(Math.hypot(...a!)).toBeCloseTo(1, 10);
    expect(b).toEqual(a);
    expect(new HashingEmbedder().embedOne('User prefers dark mode')).toEqual(a);
  });

  it('names every setting in its model id', () => {
    expect(embedder.modelId).toBe('kioku-hashing-v1:d256:n3:w0.5');
    expect(new HashingEmbedder({ dimensions: 64, ngram: 0 }).modelId).toBe('kioku-hashing-v1:d64:n0:w0.5');
    expect(new HashingEmbedder({ ngramWeight: 1 }).modelId).not.toBe(embedder.modelId);
  });

  it('is lexical: shared words and word pieces make texts similar, synonyms do not', () => {
    const v = (t: string) => embedder.embedOne(t);
    const base = v('We deploy the service with Kubernetes');
    expect(cosine(base, v('kubernetes deployment'))).toBeGreaterThan(0.4);
    // A typo still shares most character trigrams.
    expect(cosine(v('kubernetes'), v('kubernets'))).toBeGreaterThan(0.5);
    expect(cosine(v('runner'), v('running'))).toBeGreaterThan(0.2);
    // Unrelated words, and synonyms, share nothing (up to hash collisions).
    expect(Math.abs(cosine(base, v('my cat likes tuna')))).toBeLessThan(0.15);
    expect(Math.abs(cosine(v('car'), v('automobile')))).toBeLessThan(0.15);
  });

  it('gives texts without terms the zero vector', () => {
    expect(embedder.embedOne('').every((x) => x === 0)).toBe(true);
    expect(embedder.embedOne('the and of ... !!').every((x) => x === 0)).toBe(true);
  });

  it('refuses bad settings', () => {
    expect(() => new HashingEmbedder({ dimensions: 1 })).toThrow(/dimensions/);
    expect(() => new HashingEmbedder({ ngram: -1 })).toThrow(/ngram/);
    expect(() => new HashingEmbedder({ maxBatchSize: 0 })).toThrow(/maxBatchSize/);
  });

  it('honours an aborted signal', async () => {
    await expect(embedder.embed(['x'], { signal: AbortSignal.abort() })).rejects.toThrow();
  });
});

describe('embedTexts', () => {
  function recording(overrides: Partial<Embedder> = {}) {
    const calls: (readonly string[])[] = [];
    const embedder: Embedder = {
      modelId: 'fake',
      dimensions: 2,
      maxBatchSize: 3,
      async embed(texts) {
        calls.push(texts);
        return texts.map((t) => [t.length, 1]);
      },
      ...overrides,
    };
    return { embedder, calls };
  }

  it('splits the input into batches of maxBatchSize and keeps the order', async () => {
    const { embedder, calls } = recording();
    const texts = ['a', 'bb', 'ccc', 'dddd', 'eeeee', 'ffffff', 'g'];
    const vectors = await embedTexts(embedder, texts);
    expect(calls.map((c) => c.length)).toEqual([3, 3, 1]);
    expect(vectors.map((v) => v[0])).toEqual([1, 2, 3, 4, 5, 6, 1]);
    expect(await embedTexts(embedder, [])).toEqual([]);
  });

  it('gives an embedder without maxBatchSize every text at once', async () => {
    const { embedder, calls } = recording({ maxBatchSize: undefined });
    await embedTexts(embedder, ['a', 'b', 'c', 'd', 'e']);
    expect(calls.map((c) => c.length)).toEqual([5]);
  });

  it('stops between batches when the signal aborts', async () => {
    const controller = new AbortController();
    const { embedder, calls } = recording({
      async embed(texts) {
        calls.push(texts);
        controller.abort(new Error('stop'));
        return texts.map(() => [1, 1]);
      },
    });
    await expect(
      embedTexts(embedder, ['a', 'b', 'c', 'd', 'e'], { signal: controller.signal }),
    ).rejects.toThrow('stop');
    expect(calls).toHaveLength(1);
  });

  it('refuses answers of the wrong count, size or with non-finite numbers (STORAGE)', async () => {
    const bad: Array<(texts: readonly string[]) => number[][]> = [
      (texts) => texts.slice(1).map(() => [1, 1]),
      (texts) => texts.map(() => [1, 1, 1]),
      (texts) => texts.map(() => [1, Number.NaN]),
    ];
    for (const answer of bad) {
      const { embedder } = recording({ embed: async (texts) => answer(texts) });
      const error = await embedTexts(embedder, ['a', 'b']).catch((e: unknown) => e);
      expect(isKiokuError(error, 'STORAGE')).toBe(true);
    }
  });
});
