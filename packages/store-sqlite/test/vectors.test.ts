import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Embedder, HashingEmbedder, isKiokuError, withEmbeddings } from '@kioku/core';
import { forgetUser, verifyErased } from '@kioku/core/passes';
import { reembed, type VectorIndex } from '@kioku/core/store';
import {
  expectKiokuError,
  randomScope,
  type StoreHarness,
  SUITE_VECTOR_DIMENSIONS,
  vectorIndexSuite,
} from '@kioku/store-test-suite';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteStores, SqliteVectorIndex } from '../src/index.js';

const dirs: string[] = [];
const tempFile = () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'kioku-sqlite-vectors-'));
  dirs.push(dir);
  return path.join(dir, 'kioku.db');
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

// The published conformance suite: each index on a file of its own, its twin a second connection to it.
const files = new WeakMap<VectorIndex, string>();
const harness: StoreHarness<VectorIndex> = {
  name: 'sqlite-vec (SqliteVectorIndex)',
  async create(ctx) {
    const file = tempFile();
    const index = new SqliteVectorIndex({ file, dimensions: SUITE_VECTOR_DIMENSIONS, clock: ctx.clock });
    await index.setup();
    files.set(index, file);
    return index;
  },
  createTwin(index, ctx) {
    const file = files.get(index);
    if (!file) throw new Error('not an index of this harness');
    return new SqliteVectorIndex({ file, dimensions: index.dimensions, clock: ctx.clock });
  },
  destroy: (index) => (index as SqliteVectorIndex).close(),
};
vectorIndexSuite(harness);

const vec = (...head: number[]) => [...head, ...Array(8 - head.length).fill(0)];

describe('setup()', () => {
  it('creates the point table and the vec0 table, idempotently, from several connections', async () => {
    const file = tempFile();
    const indexes = [0, 1, 2].map(() => new SqliteVectorIndex({ file, dimensions: 8 }));
    await Promise.all(indexes.map((index) => index.setup()));
    await indexes[0]!.setup();
    const db = new Database(file, { readonly: true });
    const sql = db.prepare("SELECT sql FROM sqlite_master WHERE name = 'kioku_vectors'").pluck().get();
    expect(sql).toMatch(
      /USING vec0\(\s*partition TEXT PARTITION KEY,\s*kind TEXT,\s*embedding FLOAT\[8\] distance_metric=cosine/,
    );
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
    for (const index of indexes) await index.close();
  });

  it('an existing table of another size is a clear ValidationError; another table name works', async () => {
    const file = tempFile();
    const small = new SqliteVectorIndex({ file, dimensions: 4 });
    await small.setup();
    await small.upsert({ userId: 'u' }, [{ id: 'p', kind: 'facts', vector: [1, 0, 0, 0] }]);
    const wrong = new SqliteVectorIndex({ file, dimensions: 8 });
    const error = await expectKiokuError(wrong.setup(), 'VALIDATION');
    expect(error.message).toMatch(
      /holds 4-dimensional vectors; this index is configured for 8\. Use another table/,
    );
    await expectKiokuError(wrong.count({ userId: 'u' }), 'VALIDATION');
    const other = new SqliteVectorIndex({ file, dimensions: 8, table: 'kioku_vectors_8' });
    await other.setup();
    expect(await other.count({ userId: 'u' })).toBe(0);
    expect(await small.count({ userId: 'u' })).toBe(1);
    for (const index of [small, wrong, other]) await index.close();
  });

  it('an index used before setup() says to call it (STORAGE); bad options are refused', async () => {
    const file = tempFile();
    await createSqliteStores({ file }).setup(); // the stores, without vectors
    const index = new SqliteVectorIndex({ file, dimensions: 8 });
    const error = await expectKiokuError(index.search(randomScope(), { vector: vec(1) }), 'STORAGE');
    expect(error.message).toMatch(/setup\(\)/);
    await index.close();
    expect(() => new SqliteVectorIndex({ file, dimensions: 0 })).toThrow(/dimensions/);
    expect(() => new SqliteVectorIndex({ file, dimensions: 8, table: 'x"; drop' })).toThrow(/table/);
    expect(() => new SqliteVectorIndex({ dimensions: 8 })).toThrow(/exactly one/);
  });
});

describe('search', () => {
  /** Along `axis`, tilted by `i` towards another axis: similarities to any query differ from point to point. */
  const near = (axis: number, i: number) => {
    const v = Array(8).fill(0);
    v[axis] = 1;
    v[(axis + 1 + (i % 6)) % 8] = 0.01 * (i + 1);
    if (axis !== 0) v[0] = 0.02 * (i + 1);
    return v;
  };

  it('a small user among many, a rare kind and a rare payload in a big user still get k exact neighbours', async () => {
    const index = new SqliteVectorIndex({ file: tempFile(), dimensions: 8 });
    await index.setup();
    const big = randomScope();
    const small = randomScope();
    // The big user's facts all sit where the query points; its few documents and the small user far off.
    await index.upsert(
      big,
      Array.from({ length: 3000 }, (_, i) => ({
        id: `f${i}`,
        kind: 'facts',
        vector: near(0, i),
        payload: { session: i % 300 === 0 ? 'rare' : 'common' },
      })),
    );
    await index.upsert(
      big,
      Array.from({ length: 15 }, (_, i) => ({ id: `d${i}`, kind: 'documents', vector: near(3, i) })),
    );
    await index.upsert(
      small,
      Array.from({ length: 12 }, (_, i) => ({ id: `s${i}`, kind: 'facts', vector: near(5, i) })),
    );
    const query = [1, ...Array(7).fill(0)];
    const exact = async (scope: typeof big, keep: (r: { kind: string; payload: unknown }) => boolean) => {
      const snap = await index.snapshot({ userId: scope.userId });
      return snap.records
        .filter(keep)
        .map((r) => ({ id: r.id, s: r.vector[0]! / Math.hypot(...r.vector) }))
        .sort((a, b) => b.s - a.s)
        .slice(0, 10)
        .map((r) => r.id);
    };
    const ids = (hits: { id: string }[]) => hits.map((h) => h.id);
    const smallHits = await index.search(small, { vector: query, limit: 10 });
    expect(ids(smallHits)).toEqual(await exact(small, () => true));
    const docs = await index.search(big, { vector: query, limit: 10, kind: 'documents' });
    expect(ids(docs)).toEqual(await exact(big, (r) => r.kind === 'documents'));
    const rare = await index.search(big, { vector: query, limit: 10, filter: { session: 'rare' } });
    expect(ids(rare)).toEqual(
      await exact(big, (r) => (r.payload as { session?: string }).session === 'rare'),
    );
    expect(rare).toHaveLength(10);
    // Unfiltered, the scan of the partition is exact too.
    expect(ids(await index.search(big, { vector: query, limit: 10 }))).toEqual(await exact(big, () => true));
    const scores = docs.map((h) => h.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    await index.close();
  });

  it('a zero vector scores 0 and never takes a nearer point’s place', async () => {
    const index = new SqliteVectorIndex({ file: tempFile(), dimensions: 8 });
    await index.setup();
    const scope = randomScope();
    await index.upsert(
      scope,
      Array.from({ length: 12 }, (_, i) => ({
        id: `p${i}`,
        kind: 'facts',
        vector: i % 4 === 3 ? vec() : vec(1, i),
      })),
    );
    // sqlite-vec's cosine distance to a zero vector is NaN, which would upset its top-k: such points are
    // kept out of the vec0 table.
    const top = await index.search(scope, { vector: vec(1), limit: 5 });
    expect(top.map((h) => h.id)).toEqual(['p0', 'p1', 'p2', 'p4', 'p5']);
    const all = await index.search(scope, { vector: vec(-1), limit: 12 });
    expect(all.slice(0, 3).map((h) => [h.id, h.score])).toEqual([
      ['p11', 0],
      ['p3', 0],
      ['p7', 0],
    ]);
    expect(
      (await index.snapshot({ userId: scope.userId })).records.find((r) => r.id === 'p3')?.vector,
    ).toEqual(vec());
    // A point moving to and from the zero vector.
    await index.upsert(scope, [{ id: 'p3', kind: 'facts', vector: vec(1) }]);
    await index.upsert(scope, [{ id: 'p0', kind: 'facts', vector: vec() }]);
    expect((await index.search(scope, { vector: vec(1), limit: 1 }))[0]?.id).toBe('p3');
    expect(await index.count(scope)).toBe(12);
    await index.close();
  });
});

/** Counts the texts it embeds. */
function counting(embedder: Embedder): Embedder & { texts: number } {
  const counted = {
    modelId: embedder.modelId,
    dimensions: embedder.dimensions,
    texts: 0,
    embed(texts: readonly string[]) {
      counted.texts += texts.length;
      return embedder.embed(texts);
    },
  };
  return counted;
}

describe('hybrid recall over SQLite + sqlite-vec', () => {
  it('createSqliteStores({ vectors }): a restart neither embeds nor rebuilds; a model change is refused until reembed', async () => {
    const file = tempFile();
    const v1 = counting(new HashingEmbedder({ dimensions: 64 }));
    const stores = createSqliteStores({ file, vectors: { dimensions: 64 } });
    const bundle = withEmbeddings(stores, { embedder: v1 });
    await bundle.setup();
    expect(bundle.vectors).toBe(stores.vectors);
    const alice = randomScope();
    const k8s = await bundle.facts.create(alice, {
      content: 'We deploy everything with Kubernetes',
      category: 'ops',
    });
    for (let i = 0; i < 20; i++)
      await bundle.facts.create(alice, { content: `The cat sleeps on sofa number ${i}` });
    await bundle.close();

    // A new process: the vectors are in the file; only the query is embedded.
    const again = counting(new HashingEmbedder({ dimensions: 64 }));
    const reopened = createSqliteStores({ file, vectors: { dimensions: 64 } });
    const hybrid = withEmbeddings(reopened, { embedder: again });
    expect(await reopened.vectors!.count(alice, { kind: 'facts' })).toBe(21);
    expect((await hybrid.facts.search(alice, { query: 'kuberntes' }))[0]?.fact.id).toBe(k8s.id);
    expect(again.texts).toBe(1);
    expect(await reopened.vectors!.models(alice, { kind: 'facts' })).toEqual([
      { model: v1.modelId, count: 21 },
    ]);

    const v2 = new HashingEmbedder({ dimensions: 64, ngram: 4 });
    const changed = withEmbeddings(reopened, { embedder: v2 });
    const error = await changed.facts.search(alice, { query: 'kubernetes' }).catch((e: unknown) => e);
    expect(isKiokuError(error, 'CONFLICT')).toBe(true);
    const report = await reembed({
      store: reopened.facts,
      index: reopened.vectors!,
      embedder: v2,
      scope: alice,
    });
    expect(report).toMatchObject({ records: 21, vectors: 21, removed: 21 });
    expect((await changed.facts.search(alice, { query: 'kubernetes' }))[0]?.fact.id).toBe(k8s.id);
    await reopened.close();
  });

  it('forgetUser: no byte of her vectors, payloads or words is left in the file or its -wal', async () => {
    const file = tempFile();
    const stores = createSqliteStores({ file, vectors: { dimensions: 64 } });
    const bundle = withEmbeddings(stores, { embedder: new HashingEmbedder({ dimensions: 64 }) });
    await bundle.setup();
    try {
      const alice = { userId: 'alice.residue@example.org' };
      for (let i = 0; i < 80; i++) {
        await bundle.facts.create(alice, {
          content: `Her daughter Mia was diagnosed with Leukemiaxqz in Porto (${i})`,
        });
      }
      await bundle.details.create(alice, { description: 'lab results', content: 'Leukemiaxqz markers' });
      await bundle.facts.create({ userId: 'bob' }, { content: 'Bob likes tea' });
      const vectors = (await stores.vectors!.snapshot({ userId: alice.userId })).records;
      expect(vectors.length).toBe(81);
      // Her vectors as stored (float32) and her point ids: the bytes to look for.
      const needles = [
        ...vectors.map((r) => Buffer.from(Float32Array.from(r.vector.slice(0, 8)).buffer)),
        ...vectors.slice(0, 5).map((r) => Buffer.from(r.id)),
        Buffer.from('Leukemiaxqz'),
        Buffer.from(alice.userId),
      ];
      const holding = () =>
        [file, `${file}-wal`].filter((f) => {
          if (!existsSync(f)) return false;
          const bytes = readFileSync(f);
          return needles.some((needle) => bytes.includes(needle));
        });
      expect(holding()).not.toEqual([]);
      await forgetUser(bundle, alice.userId);
      expect(await verifyErased(bundle, alice.userId)).toEqual({ erased: true });
      expect(holding()).toEqual([]);
      expect(await stores.vectors!.count({ userId: 'bob' })).toBe(1);
      expect((await bundle.facts.search({ userId: 'bob' }, { query: 'tea' })).length).toBe(1);
    } finally {
      await bundle.close();
    }
  });
});
