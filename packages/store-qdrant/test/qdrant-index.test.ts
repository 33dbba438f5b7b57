import { HashingEmbedder, isKiokuError } from '@kioku/core';
import { InMemoryFactStore, InMemoryVectorIndex, reembed, withFactEmbeddings } from '@kioku/core/store';
import { expectKiokuError, randomScope } from '@kioku/store-test-suite';
import { QdrantClient } from '@qdrant/js-client-rest';
import { describe, expect, it } from 'vitest';
import { FIELDS, pointId, QdrantVectorIndex } from '../src/index.js';
import { useQdrant } from './harness.js';

const qdrant = useQdrant();
const vec = (...head: number[]) => [...head, ...Array(8 - head.length).fill(0)];

describe('setup()', () => {
  it('creates the collection (cosine) and keyword payload indexes, idempotently, also concurrently', async () => {
    const index = await qdrant.index();
    await index.setup();
    const twins = [0, 1, 2].map(
      () => new QdrantVectorIndex({ client: qdrant.client(), collection: index.collection, dimensions: 8 }),
    );
    await Promise.all(twins.map((t) => t.setup()));
    const info = await index.client.getCollection(index.collection);
    expect(info.config.params.vectors).toMatchObject({ size: 8, distance: 'Cosine' });
    const schema = info.payload_schema;
    for (const field of ['user_id', 'agent_id', 'kind', 'model'])
      expect(schema[field]?.data_type).toBe('keyword');
    expect(schema.user_id?.params).toMatchObject({ is_tenant: true });
    await qdrant.drop(index);
  });

  it('an existing collection of another size is a clear ValidationError', async () => {
    const small = await qdrant.index({ dimensions: 4 });
    const wrong = new QdrantVectorIndex({
      client: qdrant.client(),
      collection: small.collection,
      dimensions: 8,
    });
    const error = await expectKiokuError(wrong.setup(), 'VALIDATION');
    expect(error.message).toMatch(/4-dimensional .*configured for 8-dimensional/);
    await qdrant.drop(small);
  });

  it('vectors of the wrong size are refused before and, if sent anyway, by Qdrant (VALIDATION)', async () => {
    const small = await qdrant.index({ dimensions: 4 });
    // An index that skipped setup() and believes the collection holds 8 dimensions.
    const unchecked = new QdrantVectorIndex({
      client: qdrant.client(),
      collection: small.collection,
      dimensions: 8,
    });
    const error = await expectKiokuError(
      unchecked.upsert(randomScope(), [{ id: 'p', kind: 'facts', vector: vec(1) }]),
      'VALIDATION',
    );
    expect(error.message).toMatch(/dimension/i);
    await expectKiokuError(
      small.upsert(randomScope(), [{ id: 'p', kind: 'facts', vector: vec(1) }]),
      'VALIDATION',
    );
    await qdrant.drop(small);
  });

  it('a missing collection or an unreachable server is a STORAGE error', async () => {
    const missing = new QdrantVectorIndex({
      client: qdrant.client(),
      collection: qdrant.collectionName(),
      dimensions: 8,
    });
    const error = await expectKiokuError(missing.count(randomScope()), 'STORAGE');
    expect(error.message).toMatch(/setup\(\)/);
    const nowhere = new QdrantVectorIndex({
      client: new QdrantClient({ url: 'http://127.0.0.1:9', checkCompatibility: false }),
      dimensions: 8,
    });
    await expectKiokuError(nowhere.count(randomScope()), 'STORAGE');
  });

  it('refuses bad options', () => {
    expect(() => new QdrantVectorIndex({ url: qdrant.url, dimensions: 0 })).toThrow(/dimensions/);
    expect(() => new QdrantVectorIndex({ dimensions: 8 })).toThrow(/client/);
    expect(() => new QdrantVectorIndex({ url: qdrant.url, dimensions: 8, collection: '../x' })).toThrow(
      /collection/,
    );
  });
});

describe('what is stored (read back through the raw client)', () => {
  it('UUID point ids derived from scope + id, the Kioku id and scope in the payload, user data under data', async () => {
    const index = await qdrant.index();
    const scope = { userId: 'user-a', agentId: 'agent-1' };
    await index.upsert(scope, [
      { id: 'fact.1', kind: 'facts', vector: vec(1, 2), model: 'm1', payload: { user_id: 'x' } },
    ]);
    await index.upsert({ userId: 'user-a' }, [{ id: 'fact.1', kind: 'facts', vector: vec(2, 1) }]);
    const { points } = await index.client.scroll(index.collection, { limit: 10, with_payload: true });
    expect(points).toHaveLength(2);
    const withAgent = points.find((p) => p.id === pointId(scope, 'fact.1'));
    expect(withAgent?.payload).toEqual({
      kioku_id: 'fact.1',
      kind: 'facts',
      user_id: 'user-a',
      agent_id: 'agent-1',
      model: 'm1',
      data: { user_id: 'x' },
    });
    const withoutAgent = points.find((p) => p.id === pointId({ userId: 'user-a' }, 'fact.1'));
    expect(withoutAgent?.payload).toEqual({ kioku_id: 'fact.1', kind: 'facts', user_id: 'user-a', data: {} });
    expect(pointId(scope, 'fact.1')).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    // A payload field named like a scope field changes nothing: user data lives under `data`.
    expect(await index.count({ userId: 'x' })).toBe(0);
    await qdrant.drop(index);
  });

  it('eraseUser: a raw scroll of the whole collection finds neither her id nor her payloads', async () => {
    const index = await qdrant.index();
    const alice = 'alice.erase@example.org';
    for (const scope of [{ userId: alice }, { userId: alice, agentId: 'coder' }]) {
      await index.upsert(scope, [
        { id: 'fact.1', kind: 'facts', vector: vec(1, 2), payload: { note: 'Leukemiaxqz' } },
        { id: 'detail.1', kind: 'details', vector: vec(2, 1), payload: { note: 'Leukemiaxqz' } },
      ]);
    }
    await index.upsert({ userId: 'bob' }, [{ id: 'fact.1', kind: 'facts', vector: vec(3, 1) }]);
    const everything = async () =>
      JSON.stringify(
        (await index.client.scroll(index.collection, { limit: 100, with_payload: true, with_vector: true }))
          .points,
      );
    expect(await everything()).toContain(alice);
    await index.eraseUser(alice);
    const left = await everything();
    expect(left).not.toContain(alice);
    expect(left).not.toContain('Leukemiaxqz');
    expect(await index.count({ userId: 'bob' })).toBe(1);
    await qdrant.drop(index);
  });

  it('a point Kioku did not write is CORRUPT_DATA in a snapshot, never guessed at', async () => {
    const index = await qdrant.index();
    await index.client.upsert(index.collection, {
      wait: true,
      points: [{ id: 7, vector: vec(1), payload: { user_id: 'someone' } }],
    });
    await expectKiokuError(index.snapshot({ allUsers: true }), 'CORRUPT_DATA');
    await qdrant.drop(index);
  });
});

describe.skipIf(qdrant.real)('every request is scoped (checked on the test server’s request log)', () => {
  it('query, count, facet, delete and scroll of a user always filter by that user', async () => {
    const index = await qdrant.index();
    const scope = randomScope({ agent: true });
    const user = { userId: scope.userId };
    const server = qdrant.server!;
    const from = server.log.length;
    await index.upsert(scope, [{ id: 'a', kind: 'facts', vector: vec(1), model: 'm' }]);
    await index.search(scope, { vector: vec(1), kind: 'facts', filter: { n: 1 } });
    await index.count(user);
    await index.models(scope, { kind: 'facts' });
    await index.delete(scope, ['a', 'a', 'b']);
    await index.clear(user, { exceptModel: 'm' });
    await index.snapshot({ userId: scope.userId });
    const scoped = server.log
      .slice(from)
      .filter((entry) =>
        ['query_points', 'count_points', 'facet', 'delete_points', 'scroll_points'].includes(
          entry.operationId,
        ),
      );
    expect(scoped.length).toBeGreaterThanOrEqual(8);
    for (const entry of scoped) {
      const must = (entry.body as { filter?: { must?: unknown[] } }).filter?.must ?? [];
      expect(must, entry.operationId).toContainEqual({ key: FIELDS.userId, match: { value: scope.userId } });
    }
    // The agent-less scope asks for points without an agent, never for all of the user's agents.
    const agentless = scoped.filter((e) => JSON.stringify(e.body).includes('"is_empty"'));
    expect(agentless.length).toBeGreaterThan(0);
    // Writes and deletes wait for Qdrant to apply them.
    for (const entry of server.log.slice(from)) {
      if (['upsert_points', 'delete_points'].includes(entry.operationId))
        expect(entry.query.wait).toBe('true');
    }
    await qdrant.drop(index);
  });
});

describe('hybrid recall over Qdrant', () => {
  it('facts with the offline HashingEmbedder: sync, search, model change and reembed', async () => {
    const index = await qdrant.index({ dimensions: 64 });
    const store = new InMemoryFactStore();
    const v1 = new HashingEmbedder({ dimensions: 64 });
    const facts = withFactEmbeddings(store, { embedder: v1, index });
    const alice = randomScope();
    const k8s = await facts.create(alice, {
      content: 'We deploy everything with Kubernetes',
      category: 'ops',
    });
    await facts.create(alice, { content: 'The cat sleeps on the sofa', category: 'home' });
    expect((await facts.search(alice, { query: 'kuberntes' })).map((h) => h.fact.id)).toEqual([k8s.id]);
    expect(await index.models(alice, { kind: 'facts' })).toEqual([{ model: v1.modelId, count: 2 }]);

    const v2 = new HashingEmbedder({ dimensions: 64, ngram: 4 });
    const changed = withFactEmbeddings(store, { embedder: v2, index });
    const error = await changed.search(alice, { query: 'kubernetes' }).catch((e: unknown) => e);
    expect(isKiokuError(error, 'CONFLICT')).toBe(true);
    const report = await reembed({ store, index, embedder: v2, scope: alice });
    expect(report).toMatchObject({ records: 2, vectors: 2, removed: 2 });
    expect((await changed.search(alice, { query: 'kubernetes' }))[0]?.fact.id).toBe(k8s.id);

    // A snapshot of the Qdrant index restores into the in-memory one and back.
    const snapshot = await index.snapshot({ userId: alice.userId });
    const memory = new InMemoryVectorIndex({ dimensions: 64 });
    expect(await memory.restore(snapshot)).toEqual({ records: 2, partitions: 1 });
    expect(await memory.models(alice)).toEqual([{ model: v2.modelId, count: 2 }]);
    await qdrant.drop(index);
  });
});
