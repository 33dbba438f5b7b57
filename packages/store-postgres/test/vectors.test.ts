import { HashingEmbedder, isKiokuError, withEmbeddings } from '@kioku/core';
import { reembed } from '@kioku/core/store';
import { expectKiokuError, randomScope } from '@kioku/store-test-suite';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { createPostgresStores, PostgresVectorIndex } from '../src/index.js';
import { freshSchema, noServer, pgUrl } from './helpers.js';
import { usePgvector } from './pgvector.js';

const pgvector = usePgvector();
const vec = (...head: number[]) => [...head, ...Array(8 - head.length).fill(0)];

describe.skipIf(noServer)('a PostgreSQL without pgvector (this machine’s stock server)', () => {
  it('setup() is UNSUPPORTED, naming the server and what to do, and creates nothing', async () => {
    const schema = freshSchema();
    const index = new PostgresVectorIndex({ url: pgUrl, schema, dimensions: 8 });
    try {
      const error = await expectKiokuError(index.setup(), 'UNSUPPORTED');
      const { hostname, port, pathname } = new URL(pgUrl);
      expect(error.message).toContain(`${hostname}:${port || 5432}${pathname}`);
      expect(error.message).toMatch(/pgvector is not available .*Install pgvector 0\.5 or newer/);
      await expectKiokuError(index.count(randomScope()), 'STORAGE');
    } finally {
      await index.close();
    }
    const sql = postgres(pgUrl, { max: 1, onnotice: () => {} });
    const [row] = await sql<
      { n: number }[]
    >`select count(*)::int as n from pg_namespace where nspname = ${schema}`;
    await sql.end();
    expect(row?.n).toBe(0);
  });

  it('the stores need no extension; asking createPostgresStores for vectors fails setup() the same way', async () => {
    const schema = freshSchema();
    const plain = createPostgresStores({ url: pgUrl, schema });
    await plain.setup();
    expect(plain.vectors).toBeUndefined();
    await plain.facts.create({ userId: 'u' }, { content: 'works without pgvector' });
    await plain.close();
    const withVectors = createPostgresStores({ url: pgUrl, schema, vectors: { dimensions: 8 } });
    await expectKiokuError(withVectors.setup(), 'UNSUPPORTED');
    expect(await withVectors.facts.count({ userId: 'u' })).toBe(1);
    await withVectors.close();
    const sql = postgres(pgUrl, { max: 1, onnotice: () => {} });
    await sql.unsafe(`drop schema "${schema}" cascade`);
    await sql.end();
  });
});

describe(`setup() on ${pgvector.name}`, () => {
  it('creates the table with vector(dimensions), an HNSW cosine index and a scope index, idempotently and concurrently', async () => {
    const index = await pgvector.index();
    const twins = [0, 1, 2].map(
      () => new PostgresVectorIndex({ url: pgvector.url, schema: index.schema, dimensions: 8 }),
    );
    await Promise.all(twins.map((t) => t.setup()));
    await Promise.all(twins.map((t) => t.close()));
    await index.setup();
    const sql = pgvector.client();
    const indexes = await sql<{ indexdef: string }[]>`
      select indexdef from pg_indexes where schemaname = ${index.schema} and tablename = 'vectors'`;
    const defs = indexes.map((i) => i.indexdef).join('\n');
    expect(defs).toMatch(/USING hnsw \(embedding vector_cosine_ops\)/);
    expect(defs).toMatch(/\(user_id, agent_id, kind\)/);
    const [column] = await sql<{ type: string }[]>`
      select format_type(atttypid, atttypmod) as type from pg_attribute
      where attrelid = ${`"${index.schema}"."vectors"`}::regclass and attname = 'embedding'`;
    expect(column?.type).toBe('vector(8)');
    await pgvector.drop(index);
  });

  it('an existing table of another size is a clear ValidationError', async () => {
    const small = await pgvector.index({ dimensions: 4 });
    const wrong = new PostgresVectorIndex({ client: pgvector.client(), schema: small.schema, dimensions: 8 });
    const error = await expectKiokuError(wrong.setup(), 'VALIDATION');
    expect(error.message).toMatch(/holds vector\(4\); this index is configured for vector\(8\)/);
    await pgvector.drop(small);
  });

  it('an index used before setup() says to call it (STORAGE)', async () => {
    const index = new PostgresVectorIndex({
      client: pgvector.client(),
      schema: freshSchema(),
      dimensions: 8,
    });
    const error = await expectKiokuError(index.search(randomScope(), { vector: vec(1) }), 'STORAGE');
    expect(error.message).toMatch(/setup\(\)/);
  });

  it('refuses bad options', () => {
    const client = pgvector.client();
    expect(() => new PostgresVectorIndex({ client, dimensions: 0 })).toThrow(/dimensions/);
    expect(() => new PostgresVectorIndex({ client, dimensions: 8, table: 'x"; drop' })).toThrow(/table/);
    expect(() => new PostgresVectorIndex({ client, dimensions: 8, efSearch: 0 })).toThrow(/efSearch/);
    expect(() => new PostgresVectorIndex({ dimensions: 8 })).toThrow(/url/);
  });
});

describe('what is stored (read back through raw SQL)', () => {
  it('one row per point: scope, kind, model, the caller’s payload as jsonb, the vector', async () => {
    const index = await pgvector.index();
    await index.upsert({ userId: 'user-a', agentId: 'agent-1' }, [
      { id: 'fact.1', kind: 'facts', vector: vec(1, 2), model: 'm1', payload: { user_id: 'x', n: 1 } },
    ]);
    await index.upsert({ userId: 'user-a' }, [{ id: 'fact.1', kind: 'facts', vector: vec(2, 1) }]);
    const rows = await pgvector.client()`
      select user_id, agent_id, id, kind, model, payload, embedding::text as embedding
      from ${pgvector.client()(`${index.schema}.vectors`)} order by agent_id`;
    expect(rows).toEqual([
      {
        user_id: 'user-a',
        agent_id: '',
        id: 'fact.1',
        kind: 'facts',
        model: null,
        payload: {},
        embedding: '[2,1,0,0,0,0,0,0]',
      },
      {
        user_id: 'user-a',
        agent_id: 'agent-1',
        id: 'fact.1',
        kind: 'facts',
        model: 'm1',
        payload: { user_id: 'x', n: 1 },
        embedding: '[1,2,0,0,0,0,0,0]',
      },
    ]);
    // A payload field named like a scope column changes nothing.
    expect(await index.count({ userId: 'x' })).toBe(0);
    await pgvector.drop(index);
  });

  it('a row Kioku did not write is CORRUPT_DATA in a snapshot, never guessed at', async () => {
    const index = await pgvector.index();
    await pgvector
      .client()
      .unsafe(
        `insert into "${index.schema}".vectors values ('u', '', 'bad id/..', 'facts', null, '{}', '[1,0,0,0,0,0,0,0]')`,
      );
    await expectKiokuError(index.snapshot({ allUsers: true }), 'CORRUPT_DATA');
    await pgvector.drop(index);
  });
});

describe('filtered HNSW search', () => {
  /** Along `axis`, tilted by `i` towards another axis: similarities to any query differ from point to point. */
  const near = (axis: number, i: number) => {
    const v = Array(8).fill(0);
    v[axis] = 1;
    v[(axis + 1 + (i % 6)) % 8] = 0.01 * (i + 1);
    if (axis !== 0) v[0] = 0.02 * (i + 1);
    return v;
  };

  it('a small user among many, and a rare kind in a big user, still get k exact neighbours', async () => {
    const index = await pgvector.index();
    const big = randomScope();
    const small = randomScope();
    // The big user's facts all sit where the query points; its few documents and the small user far off.
    const facts = Array.from({ length: 3000 }, (_, i) => ({
      id: `f${i}`,
      kind: 'facts',
      vector: near(0, i),
    }));
    for (let i = 0; i < facts.length; i += 1000) await index.upsert(big, facts.slice(i, i + 1000));
    await index.upsert(
      big,
      Array.from({ length: 15 }, (_, i) => ({ id: `d${i}`, kind: 'documents', vector: near(3, i) })),
    );
    await index.upsert(
      small,
      Array.from({ length: 12 }, (_, i) => ({ id: `s${i}`, kind: 'facts', vector: near(5, i) })),
    );
    await pgvector.client().unsafe(`analyze "${index.schema}".vectors`);
    const query = [1, ...Array(7).fill(0)];
    const exact = async (scope: typeof big, kind?: string) => {
      const snap = await index.snapshot({ userId: scope.userId });
      const q = query.map((x) => x / Math.hypot(...query));
      return snap.records
        .filter((r) => kind === undefined || r.kind === kind)
        .map((r) => ({
          id: r.id,
          s: r.vector.reduce((a, x, j) => a + x * q[j]!, 0) / Math.hypot(...r.vector),
        }))
        .sort((a, b) => b.s - a.s)
        .slice(0, 10)
        .map((r) => r.id);
    };
    const smallHits = await index.search(small, { vector: query, limit: 10 });
    expect(smallHits).toHaveLength(10);
    expect(smallHits.map((h) => h.id).sort()).toEqual((await exact(small)).sort());
    const docs = await index.search(big, { vector: query, limit: 10, kind: 'documents' });
    expect(docs).toHaveLength(10);
    expect(docs.map((h) => h.id).sort()).toEqual((await exact(big, 'documents')).sort());
    const scores = docs.map((h) => h.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    // Unfiltered, the index is approximate: nearly all of the true ten.
    const top = (await index.search(big, { vector: query, limit: 10 })).map((h) => h.id);
    const truth = await exact(big);
    expect(top.filter((id) => truth.includes(id)).length).toBeGreaterThanOrEqual(9);
    await pgvector.drop(index);
  });
});

describe('hybrid recall over PostgreSQL + pgvector', () => {
  it('createPostgresStores({ vectors }) with withEmbeddings: sync, search, model change and reembed', async () => {
    const schema = freshSchema();
    const stores = createPostgresStores({
      url: pgvector.url,
      schema,
      clientOptions: pgvector.clientOptions(),
      vectors: { dimensions: 64 },
    });
    const v1 = new HashingEmbedder({ dimensions: 64 });
    const bundle = withEmbeddings(stores, { embedder: v1 });
    await bundle.setup();
    expect(bundle.vectors).toBe(stores.vectors);
    const alice = randomScope();
    const k8s = await bundle.facts.create(alice, {
      content: 'We deploy everything with Kubernetes',
      category: 'ops',
    });
    await bundle.facts.create(alice, { content: 'The cat sleeps on the sofa', category: 'home' });
    expect((await bundle.facts.search(alice, { query: 'kuberntes' })).map((h) => h.fact.id)).toEqual([
      k8s.id,
    ]);
    expect(await stores.vectors!.models(alice, { kind: 'facts' })).toEqual([{ model: v1.modelId, count: 2 }]);

    const v2 = new HashingEmbedder({ dimensions: 64, ngram: 4 });
    const changed = withEmbeddings(stores, { embedder: v2 });
    const error = await changed.facts.search(alice, { query: 'kubernetes' }).catch((e: unknown) => e);
    expect(isKiokuError(error, 'CONFLICT')).toBe(true);
    const report = await reembed({ store: stores.facts, index: stores.vectors!, embedder: v2, scope: alice });
    expect(report).toMatchObject({ records: 2, vectors: 2, removed: 2 });
    expect((await changed.facts.search(alice, { query: 'kubernetes' }))[0]?.fact.id).toBe(k8s.id);
    await pgvector.client().unsafe(`drop schema "${schema}" cascade`);
    await stores.close();
  });
});
