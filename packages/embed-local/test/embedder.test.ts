import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ValidationError } from '@kioku/core';
import { InMemoryFactStore, withFactEmbeddings } from '@kioku/core/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  isLocalModelLoadError,
  LocalModelLoadError,
  SENTENCE_ENCODER_FUSION_WEIGHT,
  SentenceEncoderEmbedder,
} from '../src/index.js';

const cosine = (a: number[], b: number[]) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);
const norm = (a: number[]) => Math.hypot(...a);

// One encoder for the file: the model loads once (about a second).
const encoder = new SentenceEncoderEmbedder({ batchSize: 2 });
beforeAll(() => encoder.load());

describe('SentenceEncoderEmbedder', () => {
  it('gives one 512-number unit vector per text, in order, the same in any batch', async () => {
    const texts = [
      'I adopted a puppy last week.',
      'The train was late again.',
      'We went hiking in the Alps.',
    ];
    const vectors = await encoder.embed(texts);
    expect(vectors).toHaveLength(3);
    for (const v of vectors) {
      expect(v).toHaveLength(encoder.dimensions);
      expect(v.every(Number.isFinite)).toBe(true);
      expect(norm(v)).toBeCloseTo(1, 3);
    }
    // batchSize 2 splits three texts into two runs; each text alone gives the same vector.
    for (const [i, text] of texts.entries()) {
      const [alone] = await encoder.embed([text]);
      expect(cosine(alone!, vectors[i]!)).toBeCloseTo(1, 5);
    }
    expect(encoder.dimensions).toBe(512);
    expect(encoder.maxBatchSize).toBe(2);
    expect(encoder.fusionWeight).toBe(SENTENCE_ENCODER_FUSION_WEIGHT);
  });

  it('places texts of the same meaning closer than unrelated ones, without shared words', async () => {
    const [question, answer, unrelated] = await encoder.embed([
      'What pets does she have?',
      'My dog and my two cats sleep on the sofa.',
      'The quarterly tax report is due on Friday.',
    ]);
    expect(cosine(question!, answer!)).toBeGreaterThan(cosine(question!, unrelated!) + 0.1);
  });

  it('gives blank texts the zero vector, and nothing for no texts', async () => {
    const [blank, word, spaces] = await encoder.embed(['', 'hello', '   ']);
    expect(blank!.every((x) => x === 0)).toBe(true);
    expect(spaces!.every((x) => x === 0)).toBe(true);
    expect(norm(word!)).toBeCloseTo(1, 3);
    expect(await encoder.embed([])).toEqual([]);
  });

  it('rejects with the signal reason when aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(encoder.embed(['a text'], { signal: controller.signal })).rejects.toThrow('stop');
  });

  it('checks its options', () => {
    expect(() => new SentenceEncoderEmbedder({ batchSize: 0 })).toThrow(ValidationError);
    expect(() => new SentenceEncoderEmbedder({ fusionWeight: -1 })).toThrow(ValidationError);
    expect(new SentenceEncoderEmbedder({ modelId: 'my-use', fusionWeight: 0.5 })).toMatchObject({
      modelId: 'my-use',
      fusionWeight: 0.5,
    });
  });
});

describe('missing model files', () => {
  let empty: string;
  beforeAll(async () => {
    empty = await mkdtemp(path.join(os.tmpdir(), 'kioku-embed-local-'));
  });
  afterAll(() => rm(empty, { recursive: true, force: true }));

  it('is a LocalModelLoadError (code STORAGE) naming the folder, on first use, every time', async () => {
    const embedder = new SentenceEncoderEmbedder({ modelDirectory: empty });
    for (let attempt = 0; attempt < 2; attempt++) {
      const error = await embedder.embed(['a text']).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LocalModelLoadError);
      expect(isLocalModelLoadError(error)).toBe(true);
      expect(error).toMatchObject({ code: 'STORAGE', details: { modelDirectory: empty } });
    }
  });
});

describe('hybrid recall with the encoder', () => {
  it('finds a fact by meaning and keeps to the user it searches for', async () => {
    const store = withFactEmbeddings(new InMemoryFactStore(), { embedder: encoder, weights: { vector: 1 } });
    const alice = { userId: 'alice' };
    const bob = { userId: 'bob' };
    await store.create(alice, { content: 'My dog and my two cats sleep on the sofa.', category: 'home' });
    await store.create(alice, { content: 'The quarterly tax report is due on Friday.', category: 'work' });
    await store.create(bob, { content: 'I have a hamster and a parrot.', category: 'home' });

    const hits = await store.search(alice, { query: 'which animals live with her', limit: 5 });
    expect(hits[0]?.fact.content).toBe('My dog and my two cats sleep on the sofa.');
    expect(hits.every((hit) => hit.fact.userId === 'alice')).toBe(true);
    const bobs = await store.search(bob, { query: 'which animals live with her', limit: 5 });
    expect(bobs.map((hit) => hit.fact.content)).toEqual(['I have a hamster and a parrot.']);
  });
});
