import { describe, expect, it } from 'vitest';
import {
  createInMemoryStores,
  type Embedder,
  EmbeddingModelMismatchError,
  HashingEmbedder,
  isKiokuError,
  KiokuBuilder,
} from '../src/index.js';
import { InMemoryDetailStore } from '../src/store/details/memory.js';
import { InMemoryDocumentStore } from '../src/store/documents/memory.js';
import { InMemoryFactStore } from '../src/store/facts/memory.js';
import type { FactStore } from '../src/store/facts/store.js';
import { withDetailEmbeddings } from '../src/store/hybrid/details.js';
import { withDocumentEmbeddings } from '../src/store/hybrid/documents.js';
import { HybridFactStore, withFactEmbeddings } from '../src/store/hybrid/facts.js';
import { RRF_K, reciprocalRankFusion } from '../src/store/hybrid/fusion.js';
import { reembed } from '../src/store/hybrid/reembed.js';
import { withTranscriptEmbeddings } from '../src/store/hybrid/transcript.js';
import { HYBRID_DEFAULTS } from '../src/store/hybrid/vector-side.js';
import { InMemorySessionStore } from '../src/store/sessions/memory.js';
import { InMemoryVectorIndex } from '../src/store/vector/memory.js';
import { ManualClock } from '../src/testing.js';
import { bundleWith } from './bundle.js';

/**
 * A toy "semantic" model: words map to concept axes, so synonyms are close and the test knows exactly
 * which texts the vector side relates (the lexical side knows none of these synonyms).
 */
const CONCEPTS: Record<string, number> = {
  car: 0,
  automobile: 0,
  vehicle: 0,
  sedan: 0,
  pet: 1,
  cat: 1,
  kitten: 1,
  dog: 1,
  food: 2,
  pasta: 2,
  lunch: 2,
  travel: 3,
  flight: 3,
  trip: 3,
};

function conceptEmbedder(modelId = 'concept-v1', dimensions = 6): Embedder & { calls: number } {
  const embedder = {
    modelId,
    dimensions,
    maxBatchSize: 4,
    calls: 0,
    async embed(texts: string[]) {
      embedder.calls++;
      return texts.map((text) => {
        const v = new Array<number>(dimensions).fill(0);
        for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
          const axis = CONCEPTS[word];
          if (axis !== undefined) v[axis]! += 1;
        }
        return v;
      });
    },
  };
  return embedder;
}

const alice = { userId: 'alice' };
const bob = { userId: 'bob' };

function facts(
  embedder: Embedder | undefined = conceptEmbedder(),
  index?: InMemoryVectorIndex,
  weights?: { lexical?: number; vector?: number },
) {
  const clock = new ManualClock();
  const store = new InMemoryFactStore({ clock });
  const vectors = index ?? new InMemoryVectorIndex({ dimensions: embedder?.dimensions ?? 6 });
  const hybrid = withFactEmbeddings(store, { embedder, index: vectors, ...(weights ? { weights } : {}) });
  return { clock, store, index: vectors, hybrid };
}

describe('reciprocalRankFusion', () => {
  it('scales each list by its weight; bad weights are a RangeError', () => {
    const lists = [[{ key: 'a', item: 'A' }], [{ key: 'b', item: 'B' }]];
    const fused = reciprocalRankFusion(lists, { weights: [1, 0.25] });
    expect(fused.map((f) => [f.key, f.score])).toEqual([
      ['a', 1 / 61],
      ['b', 0.25 / 61],
    ]);
    expect(() => reciprocalRankFusion(lists, { weights: [1] })).toThrow(RangeError);
    expect(() => reciprocalRankFusion(lists, { weights: [1, -1] })).toThrow(RangeError);
  });

  it('sums 1 / (k + rank) over the lists, k = 60 by default', () => {
    const fused = reciprocalRankFusion([
      [
        { key: 'a', item: 'A' },
        { key: 'b', item: 'B' },
        { key: 'c', item: 'C' },
      ],
      [
        { key: 'c', item: 'C2' },
        { key: 'd', item: 'D' },
      ],
    ]);
    expect(RRF_K).toBe(60);
    expect(fused.map((f) => f.key)).toEqual(['c', 'a', 'b', 'd']);
    expect(fused[0]).toMatchObject({ key: 'c', item: 'C', ranks: [3, 1] });
    expect(fused[0]!.score).toBeCloseTo(1 / 63 + 1 / 61, 12);
    expect(fused[1]!.score).toBeCloseTo(1 / 61, 12);
    // b (rank 2) and d (rank 2) tie; b was seen first.
    expect(fused[2]!.score).toBe(fused[3]!.score);
  });

  it('ranks an item found by both lists above one that a single list ranks first', () => {
    const fused = reciprocalRankFusion([
      ['x', 'both'].map((key) => ({ key, item: key })),
      ['y', 'both'].map((key) => ({ key, item: key })),
    ]);
    expect(fused[0]!.key).toBe('both');
  });

  it('counts a duplicate within one list once, honours k, and rejects a bad k', () => {
    const fused = reciprocalRankFusion([['a', 'a', 'b'].map((key) => ({ key, item: key }))], { k: 0 });
    expect(fused.map((f) => [f.key, f.score])).toEqual([
      ['a', 1],
      ['b', 0.5],
    ]);
    expect(() => reciprocalRankFusion([], { k: -1 })).toThrow(RangeError);
    expect(reciprocalRankFusion([[], []])).toEqual([]);
  });
});

describe('hybrid fact search', () => {
  it('without an embedder the store is returned as it is: lexical search alone', () => {
    const store = new InMemoryFactStore();
    expect(withFactEmbeddings(store, {})).toBe(store);
    expect(withFactEmbeddings(store, { embedder: undefined })).toBe(store);
    expect(withFactEmbeddings(store, { embedder: conceptEmbedder() })).toBeInstanceOf(HybridFactStore);
  });

  it('fuses lexical and vector results: synonyms are found, texts found by both rank first', async () => {
    const { hybrid, store } = facts(conceptEmbedder(), undefined, { vector: 1 });
    // Distinct categories, so lexical feedback (query expansion) has no shared word to spread through.
    const sedan = await hybrid.create(alice, { content: 'Drives a blue sedan to work', category: 'commute' });
    const car = await hybrid.create(alice, {
      content: 'Wants to sell the car and buy a kitten',
      category: 'plans',
    });
    await hybrid.create(alice, { content: 'Has a dog called Miso', category: 'pets' });
    await hybrid.create(alice, { content: 'Likes pasta for lunch', category: 'food' });

    // Lexically, "car" matches one fact (the others only through weak query-expansion terms); the
    // vector side ranks the sedan first (cosine 1 against 0.71).
    const lexical = await store.search(alice, { query: 'car' });
    expect(lexical[0]!.fact.id).toBe(car.id);
    expect(lexical.slice(1).every((h) => h.score < lexical[0]!.score / 10)).toBe(true);
    const hits = await hybrid.search(alice, { query: 'car', limit: 2 });
    expect(hits.map((h) => h.fact.id)).toEqual([car.id, sedan.id]);
    expect(hits[0]!.score).toBeCloseTo(1 / 61 + 1 / 62, 12);
    expect(hits[1]!.score).toBeGreaterThan(1 / 61);

    // Only the vector side knows "automobile" is a car.
    const vectorOnly = await hybrid.search(alice, { query: 'automobile' });
    expect(vectorOnly.map((h) => h.fact.id)).toEqual([sedan.id, car.id]);
    expect(await store.search(alice, { query: 'automobile' })).toEqual([]);
  });

  it('weighs the vector ranking by the embedder’s fusionWeight, else 0.25, unless weights are given', async () => {
    const fill = async (hybrid: FactStore) => {
      const sedan = await hybrid.create(alice, {
        content: 'Drives a blue sedan to work',
        category: 'commute',
      });
      const car = await hybrid.create(alice, { content: 'Wants to sell the car', category: 'plans' });
      return { sedan, car };
    };
    // Default: the vector side weighs HYBRID_DEFAULTS.vectorWeight; the lexical match ranks first.
    const byDefault = facts();
    const { car } = await fill(byDefault.hybrid);
    const [first] = await byDefault.hybrid.search(alice, { query: 'car', limit: 1 });
    expect(first!.fact.id).toBe(car.id);
    expect(first!.score).toBeCloseTo(1 / 61 + HYBRID_DEFAULTS.vectorWeight / 62, 12);
    // The embedder's own weight.
    const weighted = facts({ ...conceptEmbedder(), fusionWeight: 0.5 });
    await fill(weighted.hybrid);
    const [top] = await weighted.hybrid.search(alice, { query: 'car', limit: 1 });
    expect(top!.score).toBeCloseTo(1 / 61 + 0.5 / 62, 12);
    // Vector weight 0: the lexical ranking alone decides, and vector-only hits come after it.
    const lexicalOnly = facts(conceptEmbedder(), undefined, { vector: 0 });
    const fillZero = await fill(lexicalOnly.hybrid);
    const ranked = await lexicalOnly.hybrid.search(alice, { query: 'automobile car' });
    expect(ranked[0]!.fact.id).toBe(fillZero.car.id);
  });

  it('applies limit, category and tag filters to vector hits too', async () => {
    const { hybrid } = facts();
    const a = await hybrid.create(alice, { content: 'Owns a dog', category: 'pets', tags: ['home'] });
    await hybrid.create(alice, { content: 'Feeds the cat at seven', category: 'routine' });
    await hybrid.create(alice, { content: 'Walks the kitten', category: 'pets/cats' });
    expect(await hybrid.search(alice, { query: 'pet', limit: 1 })).toHaveLength(1);
    expect(
      (await hybrid.search(alice, { query: 'pet', category: 'routine' })).map((h) => h.fact.content),
    ).toEqual(['Feeds the cat at seven']);
    expect((await hybrid.search(alice, { query: 'pet', tags: ['home'] })).map((h) => h.fact.id)).toEqual([
      a.id,
    ]);
    expect(await hybrid.search(alice, { query: 'pet', category: 'pets' })).toHaveLength(2);
  });

  it('an empty query is the store’s newest-first fallback', async () => {
    const { hybrid, clock } = facts();
    await hybrid.create(alice, { content: 'first car' });
    clock.advance(1000);
    const second = await hybrid.create(alice, { content: 'second car' });
    expect((await hybrid.search(alice, { limit: 1 }))[0]!.fact.id).toBe(second.id);
  });

  it('keeps vectors in sync on create, update and delete, and drops vectors of facts deleted elsewhere', async () => {
    const { hybrid, store, index } = facts();
    const fact = await hybrid.create(alice, { content: 'Booked a flight to Oslo' });
    expect(await index.count(alice, { kind: 'facts' })).toBe(1);
    expect((await hybrid.search(alice, { query: 'trip' })).map((h) => h.fact.id)).toEqual([fact.id]);

    await hybrid.update(alice, fact.id, { content: 'Cooks pasta on Sundays' });
    expect(await hybrid.search(alice, { query: 'trip' })).toEqual([]);
    expect((await hybrid.search(alice, { query: 'food' })).map((h) => h.fact.id)).toEqual([fact.id]);

    expect(await hybrid.delete(alice, fact.id)).toBe(true);
    expect(await index.count(alice)).toBe(0);

    const other = await hybrid.create(alice, { content: 'Has a dog' });
    await store.delete(alice, other.id); // behind the wrapper's back
    expect(await index.count(alice)).toBe(1);
    expect(await hybrid.search(alice, { query: 'pet' })).toEqual([]);
    expect(await index.count(alice)).toBe(0);
  });

  it('records the model id with every vector', async () => {
    const { hybrid, index } = facts();
    await hybrid.create(alice, { content: 'car' });
    const [hit] = await index.search(alice, { vector: [1, 0, 0, 0, 0, 0] });
    expect(hit).toMatchObject({ model: 'concept-v1', payload: expect.objectContaining({}) });
    expect(await index.models(alice)).toEqual([{ model: 'concept-v1', count: 1 }]);
  });
});

describe('scope isolation of vectors', () => {
  it('one user’s vectors never reach another user’s search, count or delete', async () => {
    const index = new InMemoryVectorIndex({ dimensions: 6 });
    const { hybrid } = facts(conceptEmbedder(), index);
    const mine = await hybrid.create(alice, { id: 'same-id', content: 'Drives a sedan' });
    expect(await hybrid.search(bob, { query: 'car' })).toEqual([]);
    expect(await index.count(bob)).toBe(0);
    await hybrid.create(bob, { id: 'same-id', content: 'Has a cat' });
    expect(await hybrid.delete(bob, 'same-id')).toBe(true);
    expect((await hybrid.search(alice, { query: 'vehicle' })).map((h) => h.fact.id)).toEqual([mine.id]);
    expect(await index.count(alice)).toBe(1);
  });

  it('agents are partitions of their own', async () => {
    const { hybrid, index } = facts();
    const withAgent = { userId: 'alice', agentId: 'travel-bot' };
    await hybrid.create(withAgent, { content: 'Prefers window seats on a flight' });
    expect(await hybrid.search(alice, { query: 'trip' })).toEqual([]);
    expect(await hybrid.search(withAgent, { query: 'trip' })).toHaveLength(1);
    expect(await index.count(alice)).toBe(0);
    expect(await index.count(withAgent)).toBe(1);
  });
});

describe('embedding model changes', () => {
  it('a different model on the same index is detected on search and write; nothing is written', async () => {
    const index = new InMemoryVectorIndex({ dimensions: 6 });
    const { hybrid: v1, store } = facts(conceptEmbedder('concept-v1'), index);
    await v1.create(alice, { content: 'Drives a sedan' });
    const v2 = withFactEmbeddings(store, { embedder: conceptEmbedder('concept-v2'), index });

    const error = await v2.search(alice, { query: 'car' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbeddingModelMismatchError);
    expect(isKiokuError(error, 'CONFLICT')).toBe(true);
    expect((error as EmbeddingModelMismatchError).details).toMatchObject({
      kind: 'facts',
      model: 'concept-v2',
      found: [{ model: 'concept-v1', count: 1 }],
    });
    await expect(v2.create(alice, { content: 'Owns a cat' })).rejects.toBeInstanceOf(
      EmbeddingModelMismatchError,
    );
    expect(await store.list(alice)).toHaveLength(1);
    // Other scopes are unaffected: bob has no vectors yet.
    await v2.create(bob, { content: 'Owns a cat' });
  });

  it('unlabelled vectors count as another model', async () => {
    const index = new InMemoryVectorIndex({ dimensions: 6 });
    await index.upsert(alice, [
      { id: 'f.old', kind: 'facts', vector: [1, 0, 0, 0, 0, 0], payload: { id: 'old' } },
    ]);
    const { hybrid } = facts(conceptEmbedder(), index);
    await expect(hybrid.search(alice, { query: 'car' })).rejects.toBeInstanceOf(EmbeddingModelMismatchError);
  });

  it('a different dimension is refused when the store is built', () => {
    const index = new InMemoryVectorIndex({ dimensions: 6 });
    expect(() =>
      withFactEmbeddings(new InMemoryFactStore(), { embedder: conceptEmbedder('c', 8), index }),
    ).toThrow(EmbeddingModelMismatchError);
  });

  it('reembed rebuilds the vectors with the new model, for one scope or all users', async () => {
    const index = new InMemoryVectorIndex({ dimensions: 6 });
    const { hybrid: v1, store } = facts(conceptEmbedder('concept-v1'), index);
    const agentScope = { userId: 'alice', agentId: 'a1' };
    await v1.create(alice, { content: 'Drives a sedan' });
    await v1.create(alice, { content: 'Has a cat' });
    await v1.create(agentScope, { content: 'Flight on Monday' });
    await v1.create(bob, { content: 'Eats pasta' });
    // A fact written without the wrapper has no vector until the reembed.
    const unindexed = await store.create(alice, { content: 'Sold the automobile' });

    const v2embedder = conceptEmbedder('concept-v2');
    const v2 = withFactEmbeddings(store, { embedder: v2embedder, index });
    const one = await reembed({ store, index, embedder: v2embedder, scope: alice });
    expect(one).toEqual({
      kind: 'facts',
      model: 'concept-v2',
      partitions: 1,
      records: 3,
      vectors: 3,
      removed: 2,
    });
    expect((await v2.search(alice, { query: 'vehicle' })).map((h) => h.fact.content)).toEqual([
      'Drives a sedan',
      'Sold the automobile',
    ]);
    expect(unindexed.id).toBeTruthy();
    await expect(v2.search(agentScope, { query: 'trip' })).rejects.toBeInstanceOf(
      EmbeddingModelMismatchError,
    );
    await expect(v2.search(bob, { query: 'food' })).rejects.toBeInstanceOf(EmbeddingModelMismatchError);

    const all = await reembed({ store: v2, index, embedder: v2embedder, allUsers: true });
    expect(all).toMatchObject({ kind: 'facts', partitions: 3, records: 5, vectors: 5 });
    expect(await v2.search(agentScope, { query: 'trip' })).toHaveLength(1);
    expect(await v2.search(bob, { query: 'food' })).toHaveLength(1);
    for (const scope of [alice, agentScope, bob]) {
      expect((await index.models(scope)).map((m) => m.model)).toEqual(['concept-v2']);
    }
  });

  it('a partition whose records are all gone is rebuilt when reembed names its scope', async () => {
    const index = new InMemoryVectorIndex({ dimensions: 6 });
    const { hybrid: v1, store } = facts(conceptEmbedder('concept-v1'), index);
    const agentScope = { userId: 'alice', agentId: 'a1' };
    const gone = await v1.create(agentScope, { content: 'Flight on Monday' });
    await v1.create(alice, { content: 'Drives a sedan' });
    // Deleted behind the wrapper's back (another process, a restore without vectors): its vector stays.
    await store.delete(agentScope, gone.id);
    const v2embedder = conceptEmbedder('concept-v2');
    const v2 = withFactEmbeddings(store, { embedder: v2embedder, index });

    // A user-wide rebuild reads the records, so it never sees the emptied partition…
    await reembed({ store, index, embedder: v2embedder, userId: 'alice' });
    expect(await v2.search(alice, { query: 'vehicle' })).toHaveLength(1);
    await expect(v2.search(agentScope, { query: 'trip' })).rejects.toBeInstanceOf(
      EmbeddingModelMismatchError,
    );
    // …naming the partition clears its old vectors (and writes none: it has no records).
    const named = await reembed({ store, index, embedder: v2embedder, scope: agentScope });
    expect(named).toMatchObject({ partitions: 1, records: 0, vectors: 0, removed: 1 });
    expect(await v2.search(agentScope, { query: 'trip' })).toEqual([]);
  });

  it('reembed takes exactly one target, infers the kind, and stops on an aborted signal', async () => {
    const index = new InMemoryVectorIndex({ dimensions: 6 });
    const store = new InMemoryFactStore();
    const embedder = conceptEmbedder();
    await expect(reembed({ store, index, embedder })).rejects.toThrow(/exactly one/);
    await expect(reembed({ store, index, embedder, scope: alice, allUsers: true })).rejects.toThrow(
      /exactly one/,
    );
    await store.create(alice, { content: 'car' });
    await expect(
      reembed({ store, index, embedder, userId: 'alice', signal: AbortSignal.abort() }),
    ).rejects.toThrow();
    expect(await index.count(alice)).toBe(0);
    const report = await reembed({ store: new InMemoryDocumentStore(), index, embedder, userId: 'alice' });
    expect(report.kind).toBe('documents');
  });

  it('restoring through the wrapper rebuilds the restored partitions’ vectors', async () => {
    const { hybrid, store } = facts();
    await hybrid.create(alice, { content: 'Drives a sedan' });
    const snapshot = await store.snapshot({ userId: 'alice' });
    const target = facts();
    await target.hybrid.restore(snapshot);
    expect(await target.index.count(alice)).toBe(1);
    expect(await target.hybrid.search(alice, { query: 'car' })).toHaveLength(1);
  });
});

describe('hybrid document, detail and transcript search', () => {
  it('documents: a vector per chunk, fused chunk hits, removed with the document', async () => {
    const index = new InMemoryVectorIndex({ dimensions: 6 });
    const store = new InMemoryDocumentStore({ chunkTokens: 20 });
    const docs = withDocumentEmbeddings(store, { embedder: conceptEmbedder(), index });
    const long = Array.from({ length: 6 }, (_, i) => `Paragraph ${i} talks about nothing much at all.`).join(
      '\n\n',
    );
    const guide = await docs.create(alice, {
      title: 'Garage guide',
      text: `${long}\n\nService the sedan every spring.`,
      tags: ['garage'],
    });
    const menu = await docs.create(alice, { title: 'Menu', text: 'Pasta on Fridays.' });
    expect(guide.chunks.length).toBeGreaterThan(1);
    expect(await index.count(alice, { kind: 'documents' })).toBe(guide.chunks.length + menu.chunks.length);

    const hits = await docs.search(alice, { query: 'vehicle maintenance', limit: 3 });
    expect(hits[0]).toMatchObject({ documentId: guide.id, title: 'Garage guide' });
    expect(hits[0]!.chunk.text).toContain('sedan');
    expect(await docs.search(alice, { query: 'food', tags: ['garage'] })).toEqual([]);
    expect((await docs.search(alice, { query: 'lunch' }))[0]?.documentId).toBe(menu.id);

    expect(await docs.delete(alice, guide.id)).toBe(true);
    expect(await index.count(alice)).toBe(menu.chunks.length);
    expect(withDocumentEmbeddings(store, {})).toBe(store);
  });

  it('details: per user, filtered by thread on both sides, no vector once deactivated', async () => {
    const index = new InMemoryVectorIndex({ dimensions: 6 });
    const store = new InMemoryDetailStore();
    const details = withDetailEmbeddings(store, { embedder: conceptEmbedder(), index });
    const t1 = { userId: 'alice', agentId: 'a', threadId: 't1' };
    const t2 = { userId: 'alice', agentId: 'b', threadId: 't2' };
    const one = await details.create(t1, {
      description: 'flight search results',
      content: 'OSL to BER, 3 options',
    });
    const two = await details.create(t2, { description: 'trip itinerary', content: 'Day 1: museum' });
    expect(await index.count(alice, { kind: 'details' })).toBe(2);

    expect((await details.search(alice, { query: 'travel' })).map((h) => h.detail.id).sort()).toEqual(
      [one.id, two.id].sort(),
    );
    expect(
      (await details.search(alice, { query: 'travel', threadId: 't2' })).map((h) => h.detail.id),
    ).toEqual([two.id]);
    expect((await details.search(alice, { query: 'travel', agentId: 'a' })).map((h) => h.detail.id)).toEqual([
      one.id,
    ]);
    expect(await details.search(bob, { query: 'travel' })).toEqual([]);

    expect(await details.deactivate(alice, one.id)).toBe(true);
    expect(await index.count(alice)).toBe(1);
    expect((await details.search(alice, { query: 'travel' })).map((h) => h.detail.id)).toEqual([two.id]);
    expect(withDetailEmbeddings(store, {})).toBe(store);
  });

  it('transcript: embeds user and assistant entries, searches one session or all, fuses with BM25', async () => {
    const index = new InMemoryVectorIndex({ dimensions: 6 });
    const clock = new ManualClock();
    const sessions = withTranscriptEmbeddings(new InMemorySessionStore({ clock }), {
      embedder: conceptEmbedder(),
      index,
    });
    const s1 = await sessions.create(alice);
    const s2 = await sessions.create(alice);
    await sessions.transcriptAppend(alice, s1.id, [
      { role: 'system', content: 'You are a travel agent' },
      { role: 'user', content: 'Book me a flight to Rome' },
      { role: 'assistant', content: 'Booked: Rome, Friday' },
      { role: 'tool', content: 'flight API says ok', toolCallId: 'c1' },
    ]);
    clock.advance(10);
    await sessions.transcriptAppend(alice, s2.id, { role: 'user', content: 'My kitten is sick' });
    expect(await index.count(alice, { kind: 'transcript' })).toBe(3);

    const trip = await sessions.searchTranscript(alice, { query: 'trip' });
    expect(trip.map((h) => h.entry.content)).toEqual(['Book me a flight to Rome']);
    expect(trip[0]!.sessionId).toBe(s1.id);
    const rome = await sessions.searchTranscript(alice, { query: 'rome flight' });
    expect(rome.map((h) => h.entry.content)).toEqual(['Book me a flight to Rome', 'Booked: Rome, Friday']);
    expect(await sessions.searchTranscript(alice, { query: 'pet', sessionId: s1.id })).toEqual([]);
    expect((await sessions.searchTranscript(alice, { query: 'pet', sessionId: s2.id }))[0]?.sessionId).toBe(
      s2.id,
    );
    expect(await sessions.searchTranscript(bob, { query: 'trip' })).toEqual([]);
    await expect(sessions.searchTranscript(bob, { query: 'trip', sessionId: s1.id })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });

    expect(await sessions.delete(alice, s1.id)).toBe(true);
    expect(await index.count(alice)).toBe(1);
  });

  it('transcript: lexical alone without an embedder; evicted entries’ vectors are dropped when found', async () => {
    const lexicalOnly = withTranscriptEmbeddings(new InMemorySessionStore());
    const s = await lexicalOnly.create(alice);
    await lexicalOnly.transcriptAppend(alice, s.id, [
      { role: 'user', content: 'Book me a flight to Rome' },
      { role: 'user', content: 'My kitten is sick' },
    ]);
    expect(
      (await lexicalOnly.searchTranscript(alice, { query: 'flight' })).map((h) => h.entry.content),
    ).toEqual(['Book me a flight to Rome']);
    expect(await lexicalOnly.searchTranscript(alice, { query: 'trip' })).toEqual([]);
    expect(lexicalOnly.vectors).toBeUndefined();

    const index = new InMemoryVectorIndex({ dimensions: 6 });
    const capped = withTranscriptEmbeddings(new InMemorySessionStore({ transcriptCap: 2 }), {
      embedder: conceptEmbedder(),
      index,
    });
    const c = await capped.create(alice);
    await capped.transcriptAppend(alice, c.id, { role: 'user', content: 'flight to Rome' });
    await capped.transcriptAppend(alice, c.id, [
      { role: 'user', content: 'cat food' },
      { role: 'assistant', content: 'noted' },
    ]);
    expect(await index.count(alice)).toBe(3);
    expect(await capped.searchTranscript(alice, { query: 'trip' })).toEqual([]);
    expect(await index.count(alice)).toBe(2);
  });

  it('works end to end with the offline HashingEmbedder (typos are found)', async () => {
    const embedder = new HashingEmbedder({ dimensions: 128 });
    const index = new InMemoryVectorIndex({ dimensions: 128 });
    const store = new InMemoryFactStore();
    const hybrid = withFactEmbeddings(store, { embedder, index });
    const k8s = await hybrid.create(alice, { content: 'We deploy everything with Kubernetes' });
    await hybrid.create(alice, { content: 'The cat sleeps on the sofa' });
    // A transposition the stemmer cannot repair; the character trigrams still overlap.
    expect(await store.search(alice, { query: 'kuberntes' })).toEqual([]);
    expect((await hybrid.search(alice, { query: 'kuberntes' })).map((h) => h.fact.id)).toEqual([k8s.id]);
  });
});

describe('long-term memory with hybrid recall', () => {
  async function recall(embedder: Embedder | undefined, message: string) {
    const clock = new ManualClock();
    const facts = new InMemoryFactStore({ clock });
    const sessions = new InMemorySessionStore({ clock });
    await facts.create(alice, { content: 'Drives a sedan to the office', category: 'commute' });
    await facts.create(alice, { content: 'Allergic to peanuts', category: 'health' });
    const index = new InMemoryVectorIndex({ dimensions: 6 });
    if (embedder) await reembed({ store: facts, index, embedder, userId: 'alice' });
    const kioku = new KiokuBuilder({
      stores: bundleWith({ sessions, facts }),
      ...(embedder ? { embeddings: { embedder, index } } : {}),
      systemPrompt: 'You are helpful.',
      clock,
    })
      .withFacts({ mode: 'recall' })
      .build();
    const turn = await (await kioku.startConversation(alice)).prepare(message);
    return turn.messages.map((m) => String(m.content)).join('\n');
  }

  it('is lexical by default and hybrid when given an embedder', async () => {
    // "automobile" shares no word with the fact; the first turn falls back to the newest facts, so ask on
    // a message whose lexical search finds the peanut fact only.
    const lexical = await recall(undefined, 'peanuts in my automobile?');
    expect(lexical).toContain('Allergic to peanuts');
    expect(lexical).not.toContain('sedan');
    const hybrid = await recall(conceptEmbedder(), 'peanuts in my automobile?');
    expect(hybrid).toContain('Allergic to peanuts');
    expect(hybrid).toContain('Drives a sedan');
  });

  it('keeps the vectors of facts saved through its tools', async () => {
    const index = new InMemoryVectorIndex({ dimensions: 6 });
    const kioku = new KiokuBuilder({
      stores: createInMemoryStores(),
      embeddings: { embedder: conceptEmbedder(), index },
    })
      .withFacts({ mode: 'recall' })
      .build();
    const feature = kioku.features[0]!;
    const save = feature.toolkit!.tools.find((t) => t.name === 'save_memory')!;
    await save.execute({ content: 'Takes a flight to Rome in May' }, { scope: alice } as never);
    expect(await index.count(alice, { kind: 'facts' })).toBe(1);
    const search = feature.toolkit!.tools.find((t) => t.name === 'search_memory')!;
    const found = (await search.execute({ query: 'trip' }, { scope: alice } as never)) as Array<{
      content: string;
    }>;
    expect(found.map((f) => f.content)).toEqual(['Takes a flight to Rome in May']);
  });
});
