import type { Scope } from '@kioku/core';
import type { VectorIndex, VectorPointInput, VectorSnapshot } from '@kioku/core/store';
import { beforeEach, describe, expect, it } from 'vitest';
import { type StoreHarness, useHarness } from './harness.js';
import { expectKiokuError, HOSTILE_IDS, label, randomId, randomScope, times } from './helpers.js';

/** A good size for the harness's index; the suite works with any `dimensions` of at least 3. */
export const SUITE_VECTOR_DIMENSIONS = 8;

/** `vector` scaled to unit length, each component rounded to 5 decimal places. */
function unitRounded(vector: readonly number[]): number[] {
  const norm = Math.hypot(...vector) || 1;
  return vector.map((x) => Math.round((x / norm) * 1e5) / 1e5 + 0);
}

/**
 * Conformance tests for a VectorIndex. The harness creates an index of any dimensionality (at least 3;
 * `SUITE_VECTOR_DIMENSIONS` is a good choice); the suite reads it from the index's `dimensions`.
 */
export function vectorIndexSuite(h: StoreHarness<VectorIndex>): void {
  describe(`VectorIndex conformance: ${h.name}`, () => {
    const fx = useHarness(h);
    /** A vector of the index's size: the given leading components, then zeros. */
    const vec = (...head: number[]) => [...head, ...Array(fx.store.dimensions - head.length).fill(0)];
    const ids = async (
      scope: Scope,
      vector: number[],
      options: { kind?: string; limit?: number; minScore?: number } = {},
    ) => (await fx.store.search(scope, { vector, limit: 100, ...options })).map((hit) => hit.id);

    const POINTS = (): VectorPointInput[] => [
      { id: 'x', kind: 'facts', vector: vec(1, 0, 0), payload: { text: 'along x' } },
      { id: 'xy', kind: 'facts', vector: vec(1, 1, 0), payload: { text: 'diagonal' } },
      { id: 'y', kind: 'documents', vector: vec(0, 1, 0) },
      { id: 'z', kind: 'documents', vector: vec(0, 0, 3) },
      { id: 'neg', kind: 'facts', vector: vec(-2, 0, 0) },
    ];

    beforeEach(() => {
      expect(
        fx.store.dimensions,
        'the harness must create an index of at least 3 dimensions',
      ).toBeGreaterThanOrEqual(3);
    });

    describe('upsert, search, delete, count', () => {
      it('ranks by cosine similarity, best first, with payloads', async () => {
        const scope = randomScope();
        await fx.store.upsert(scope, POINTS());
        const hits = await fx.store.search(scope, { vector: vec(5, 0, 0), limit: 10 });
        expect(hits.map((hit) => hit.id).slice(0, 2)).toEqual(['x', 'xy']);
        expect(hits.at(-1)?.id).toBe('neg');
        expect(hits).toHaveLength(5);
        expect(hits[0]).toMatchObject({ id: 'x', kind: 'facts', payload: { text: 'along x' } });
        expect(hits[0]!.score).toBeCloseTo(1, 5);
        expect(hits[1]!.score).toBeCloseTo(Math.SQRT1_2, 5);
        expect(hits.at(-1)!.score).toBeCloseTo(-1, 5);
        for (const hit of hits.slice(2, 4)) expect(hit.score).toBeCloseTo(0, 5);
        expect(hits.find((hit) => hit.id === 'y')?.payload).toEqual({});
      });

      it('filters by kind, applies limit and minScore', async () => {
        const scope = randomScope();
        await fx.store.upsert(scope, POINTS());
        expect(await ids(scope, vec(1, 0, 0), { kind: 'facts' })).toEqual(['x', 'xy', 'neg']);
        expect((await ids(scope, vec(0, 1, 0), { kind: 'documents' }))[0]).toBe('y');
        expect(await ids(scope, vec(0, 1, 0), { kind: 'documents' })).toHaveLength(2);
        expect(await ids(scope, vec(1, 0, 0), { kind: 'transcript' })).toEqual([]);
        expect(await ids(scope, vec(1, 0, 0), { limit: 2 })).toEqual(['x', 'xy']);
        expect(await ids(scope, vec(1, 0, 0), { minScore: 0.5 })).toEqual(['x', 'xy']);
      });

      it('upserting an existing id replaces it', async () => {
        const scope = randomScope();
        await fx.store.upsert(scope, POINTS());
        await fx.store.upsert(scope, [{ id: 'x', kind: 'details', vector: vec(0, 0, 1), payload: { v: 2 } }]);
        expect(await fx.store.count(scope)).toBe(5);
        const hits = await fx.store.search(scope, { vector: vec(0, 0, 1), kind: 'details' });
        expect(hits).toHaveLength(1);
        expect(hits[0]).toMatchObject({ id: 'x', kind: 'details', payload: { v: 2 } });
        expect(hits[0]!.score).toBeCloseTo(1, 5);
        expect((await ids(scope, vec(1, 0, 0)))[0]).toBe('xy');
      });

      it('delete removes the given ids and returns how many existed', async () => {
        const scope = randomScope();
        await fx.store.upsert(scope, POINTS());
        expect(await fx.store.count(scope)).toBe(5);
        expect(await fx.store.delete(scope, ['x', 'y', 'missing'])).toBe(2);
        expect(await fx.store.delete(scope, ['x'])).toBe(0);
        expect(await fx.store.delete(scope, [])).toBe(0);
        expect(await fx.store.count(scope)).toBe(3);
        expect(await ids(scope, vec(1, 0, 0))).toEqual(['xy', 'z', 'neg']);
      });

      it('an empty scope has nothing', async () => {
        const scope = randomScope();
        expect(await fx.store.count(scope)).toBe(0);
        expect(await fx.store.search(scope, { vector: vec(1, 0, 0) })).toEqual([]);
      });
    });

    describe('eraseUser', () => {
      it('removes every point of the user, every agent and kind, returns their ids, leaves others', async () => {
        const user = randomScope();
        const agent = { ...user, agentId: randomId('agent') };
        const other = randomScope();
        await fx.store.upsert(user, POINTS());
        await fx.store.upsert(agent, [{ id: 'q', kind: 'transcript', vector: vec(1, 0, 0) }]);
        await fx.store.upsert(other, POINTS());
        expect((await fx.store.eraseUser(user.userId)).sort()).toEqual(['neg', 'q', 'x', 'xy', 'y', 'z']);
        expect(await fx.store.eraseUser(user.userId)).toEqual([]);
        expect(await fx.store.count(user)).toBe(0);
        expect(await fx.store.count(agent)).toBe(0);
        expect(await fx.store.search(agent, { vector: vec(1, 0, 0) })).toEqual([]);
        expect((await fx.store.snapshot({ userId: user.userId })).records).toEqual([]);
        expect(await fx.store.count(other)).toBe(5);
      });
    });

    describe('scope isolation', () => {
      it('user B never sees or deletes user A’s points', async () => {
        const a = randomScope();
        const b = randomScope();
        await fx.store.upsert(a, POINTS());
        await fx.store.upsert(b, [{ id: 'own', kind: 'facts', vector: vec(1, 0, 0) }]);
        expect(await ids(b, vec(1, 0, 0))).toEqual(['own']);
        expect(await fx.store.count(b)).toBe(1);
        expect(await fx.store.delete(b, ['x', 'xy'])).toBe(0);
        expect(await fx.store.count(a)).toBe(5);
        await fx.store.upsert(b, [{ id: 'x', kind: 'facts', vector: vec(0, 1, 0) }]);
        expect((await fx.store.search(a, { vector: vec(1, 0, 0), limit: 1 }))[0]?.score).toBeCloseTo(1, 5);
      });

      it('the same user with another agent (or none) is another partition', async () => {
        const user = randomScope();
        const agent = { ...user, agentId: randomId('agent') };
        await fx.store.upsert(user, [{ id: 'p', kind: 'facts', vector: vec(1, 0, 0) }]);
        await fx.store.upsert(agent, [{ id: 'q', kind: 'facts', vector: vec(1, 0, 0) }]);
        expect(await ids(user, vec(1, 0, 0))).toEqual(['p']);
        expect(await ids(agent, vec(1, 0, 0))).toEqual(['q']);
        expect(await fx.store.delete(agent, ['p'])).toBe(0);
        expect(await fx.store.count(user)).toBe(1);
      });
    });

    describe('bad input is refused with VALIDATION and changes nothing', () => {
      it('a dimension mismatch', async () => {
        const scope = randomScope();
        await fx.store.upsert(scope, POINTS());
        const d = fx.store.dimensions;
        const long = Array(d + 1).fill(1);
        const short = Array(d - 1).fill(1);
        await expectKiokuError(
          fx.store.upsert(scope, [{ id: 'long', kind: 'facts', vector: long }]),
          'VALIDATION',
        );
        await expectKiokuError(
          fx.store.upsert(scope, [{ id: 'short', kind: 'facts', vector: short }]),
          'VALIDATION',
        );
        await expectKiokuError(fx.store.search(scope, { vector: long }), 'VALIDATION');
        await expectKiokuError(fx.store.search(scope, { vector: short }), 'VALIDATION');
        expect(await fx.store.count(scope)).toBe(5);
      });

      it('a batch with one bad point stores none of it', async () => {
        const scope = randomScope();
        const good = { id: 'good', kind: 'facts', vector: vec(1, 0, 0) };
        const bad = { id: 'bad', kind: 'facts', vector: [1, 2] };
        await expectKiokuError(fx.store.upsert(scope, [good, bad]), 'VALIDATION');
        expect(await fx.store.count(scope)).toBe(0);
      });

      const badPoints: Array<[string, () => unknown]> = [
        ['NaN in the vector', () => ({ id: 'p', kind: 'facts', vector: vec(Number.NaN, 1) })],
        [
          'Infinity in the vector',
          () => ({ id: 'p', kind: 'facts', vector: vec(Number.POSITIVE_INFINITY, 1) }),
        ],
        ['an empty vector', () => ({ id: 'p', kind: 'facts', vector: [] })],
        ['an empty kind', () => ({ id: 'p', kind: '', vector: vec(1) })],
        ['a kind over 32 characters', () => ({ id: 'p', kind: 'k'.repeat(33), vector: vec(1) })],
        ['a non-numeric vector', () => ({ id: 'p', kind: 'facts', vector: vec(1).map(String) })],
        [
          'payload over the limit',
          () => ({ id: 'p', kind: 'facts', vector: vec(1), payload: { x: 'x'.repeat(70_000) } }),
        ],
      ];
      for (const [name, point] of badPoints) {
        it(name, async () => {
          const scope = randomScope();
          await fx.store.upsert(scope, POINTS());
          await expectKiokuError(fx.store.upsert(scope, [point() as VectorPointInput]), 'VALIDATION');
          expect(await fx.store.count(scope)).toBe(5);
          expect(await ids(scope, vec(1, 0, 0), { limit: 1 })).toEqual(['x']);
        });
      }

      it('bad queries', async () => {
        const scope = randomScope();
        await expectKiokuError(fx.store.search(scope, { vector: vec(1), limit: 0 }), 'VALIDATION');
        await expectKiokuError(fx.store.search(scope, { vector: [] }), 'VALIDATION');
        await expectKiokuError(fx.store.search(scope, { vector: vec(1), minScore: 2 }), 'VALIDATION');
      });
    });

    describe('hostile ids are refused with VALIDATION and change nothing', () => {
      for (const bad of HOSTILE_IDS) {
        it(label(bad), async () => {
          const scope = randomScope({ agent: true });
          await fx.store.upsert(scope, POINTS());
          await expectKiokuError(
            fx.store.upsert(scope, [{ id: bad, kind: 'facts', vector: vec(1) }]),
            'VALIDATION',
          );
          await expectKiokuError(fx.store.delete(scope, [bad]), 'VALIDATION');
          await expectKiokuError(fx.store.delete(scope, ['x', bad]), 'VALIDATION');
          for (const hostile of [{ userId: bad }, { userId: scope.userId, agentId: bad }]) {
            await expectKiokuError(
              fx.store.upsert(hostile, [{ id: 'p', kind: 'facts', vector: vec(1) }]),
              'VALIDATION',
            );
            await expectKiokuError(fx.store.search(hostile, { vector: vec(1) }), 'VALIDATION');
            await expectKiokuError(fx.store.delete(hostile, ['x']), 'VALIDATION');
            await expectKiokuError(fx.store.count(hostile), 'VALIDATION');
          }
          expect(await fx.store.count(scope)).toBe(5);
          expect(await ids(scope, vec(1, 0, 0), { limit: 2 })).toEqual(['x', 'xy']);
        });
      }
    });

    describe('payload filters, kinds, models and clear', () => {
      const LABELLED = (): VectorPointInput[] => [
        { id: 'a1', kind: 'facts', vector: vec(1, 0, 0), model: 'model-a', payload: { session: 's1', n: 1 } },
        { id: 'a2', kind: 'facts', vector: vec(1, 1, 0), model: 'model-a', payload: { session: 's2', n: 2 } },
        {
          id: 'b1',
          kind: 'facts',
          vector: vec(1, 0, 1),
          model: 'model-b',
          payload: { session: 's1', on: true },
        },
        { id: 'd1', kind: 'documents', vector: vec(0, 1, 0), model: 'model-a', payload: { session: 's1' } },
        { id: 'u1', kind: 'documents', vector: vec(0, 0, 1) },
      ];

      it('filters by exact payload values (strings, integers, booleans), all keys required', async () => {
        const scope = randomScope();
        await fx.store.upsert(scope, LABELLED());
        const q = (filter: Record<string, string | number | boolean>, kind?: string) =>
          ids(scope, vec(1, 0, 0), { ...(kind ? { kind } : {}), filter } as never).then((r) => r.sort());
        expect(await q({ session: 's1' })).toEqual(['a1', 'b1', 'd1']);
        expect(await q({ session: 's1' }, 'facts')).toEqual(['a1', 'b1']);
        expect(await q({ n: 2 })).toEqual(['a2']);
        expect(await q({ on: true })).toEqual(['b1']);
        expect(await q({ on: false })).toEqual([]);
        expect(await q({ session: 's1', n: 1 })).toEqual(['a1']);
        expect(await q({ session: 'S1' })).toEqual([]);
        expect(await q({ missing: 'x' })).toEqual([]);
      });

      it('returns the model with each hit', async () => {
        const scope = randomScope();
        await fx.store.upsert(scope, LABELLED());
        const hits = await fx.store.search(scope, { vector: vec(0, 0, 1), limit: 100 });
        const byId = new Map(hits.map((hit) => [hit.id, hit]));
        expect(byId.get('b1')?.model).toBe('model-b');
        expect(byId.get('a1')?.model).toBe('model-a');
        expect(byId.get('u1')?.model).toBeUndefined();
      });

      it('counts and lists models per kind', async () => {
        const scope = randomScope();
        await fx.store.upsert(scope, LABELLED());
        expect(await fx.store.count(scope, { kind: 'facts' })).toBe(3);
        expect(await fx.store.count(scope, { kind: 'documents' })).toBe(2);
        expect(await fx.store.count(scope, { kind: 'details' })).toBe(0);
        expect(await fx.store.models(scope)).toEqual([
          { model: 'model-a', count: 3 },
          { model: 'model-b', count: 1 },
          { model: null, count: 1 },
        ]);
        expect(await fx.store.models(scope, { kind: 'facts' })).toEqual([
          { model: 'model-a', count: 2 },
          { model: 'model-b', count: 1 },
        ]);
        expect(await fx.store.models(randomScope())).toEqual([]);
      });

      it('clear removes a kind, or every model but one, and only in the scope', async () => {
        const scope = randomScope();
        const other = randomScope();
        await fx.store.upsert(scope, LABELLED());
        await fx.store.upsert(other, LABELLED());
        expect(await fx.store.clear(scope, { kind: 'facts', exceptModel: 'model-a' })).toBe(1);
        expect((await ids(scope, vec(1, 0, 0), { kind: 'facts' })).sort()).toEqual(['a1', 'a2']);
        expect(await fx.store.clear(scope, { exceptModel: 'model-a' })).toBe(1);
        expect(await fx.store.models(scope)).toEqual([{ model: 'model-a', count: 3 }]);
        expect(await fx.store.clear(scope, { kind: 'documents' })).toBe(1);
        expect(await fx.store.count(scope)).toBe(2);
        expect(await fx.store.clear(scope)).toBe(2);
        expect(await fx.store.count(scope)).toBe(0);
        expect(await fx.store.count(other)).toBe(5);
      });

      it('bad filters and selections are refused with VALIDATION', async () => {
        const scope = randomScope();
        const bad = [
          { 'a.b': 'x' },
          { '': 'x' },
          { $where: 'x' },
          { k: 1.5 },
          { k: { nested: 1 } },
          { k: null },
        ];
        for (const filter of bad) {
          await expectKiokuError(fx.store.search(scope, { vector: vec(1), filter } as never), 'VALIDATION');
        }
        await expectKiokuError(fx.store.count(scope, { kind: '' }), 'VALIDATION');
        await expectKiokuError(fx.store.models(scope, { kind: 'k'.repeat(33) }), 'VALIDATION');
        await expectKiokuError(fx.store.clear(scope, { exceptModel: '' }), 'VALIDATION');
        await expectKiokuError(
          fx.store.upsert(scope, [{ id: 'p', kind: 'facts', vector: vec(1), model: 'a\nb' }]),
          'VALIDATION',
        );
      });
    });

    describe('snapshot and restore', () => {
      /**
       * Records comparable across backends: by id, vectors as unit vectors rounded to 5 places (a cosine
       * backend such as Qdrant may store vectors normalised; the direction is what counts).
       */
      const comparable = (rows: VectorSnapshot['records']) =>
        [...rows]
          .sort((a, b) => a.id.localeCompare(b.id))
          .map((r) => ({ ...r, vector: unitRounded(r.vector) }));
      it('round-trips a user’s points with payloads and models into another index', async () => {
        const user = randomScope();
        const withAgent = { ...user, agentId: randomId('agent') };
        const stranger = randomScope();
        await fx.store.upsert(user, POINTS());
        await fx.store.upsert(withAgent, [
          {
            id: 'm',
            kind: 'facts',
            vector: vec(0.5, 0.25, 2),
            model: 'model-a',
            payload: { deep: { x: [1, 'two'] } },
          },
        ]);
        await fx.store.upsert(stranger, [{ id: 's', kind: 'facts', vector: vec(1, 0, 0) }]);
        const snap = await fx.store.snapshot({ userId: user.userId });
        expect(snap).toMatchObject({
          format: 'kioku.snapshot',
          schemaVersion: 1,
          kind: 'vectors',
          selector: { userId: user.userId },
          dimensions: fx.store.dimensions,
        });
        expect(snap.records).toHaveLength(6);
        expect(snap.records.every((r) => r.userId === user.userId)).toBe(true);
        const m = snap.records.find((r) => r.id === 'm');
        expect(m).toMatchObject({
          agentId: withAgent.agentId,
          model: 'model-a',
          payload: { deep: { x: [1, 'two'] } },
        });
        expect(unitRounded(m!.vector)).toEqual(unitRounded(vec(0.5, 0.25, 2)));

        const target = await fx.fresh();
        const json = JSON.parse(JSON.stringify(snap));
        expect(await target.restore(json)).toEqual({ records: 6, partitions: 2 });
        expect(await target.count(user)).toBe(5);
        expect(await target.count(withAgent)).toBe(1);
        expect(await target.count(stranger)).toBe(0);
        const before = await fx.store.search(user, { vector: vec(5, 1, 0), limit: 10 });
        const after = await target.search(user, { vector: vec(5, 1, 0), limit: 10 });
        expect(after.map((h) => h.id)).toEqual(before.map((h) => h.id));
        expect(after.find((h) => h.id === 'x')?.payload).toEqual({ text: 'along x' });
        expect(comparable((await target.snapshot({ userId: user.userId })).records)).toEqual(
          comparable(snap.records),
        );
      });

      it('an operator snapshot holds every user; restore replaces only the partitions it contains', async () => {
        const a = randomScope();
        const b = randomScope();
        await fx.store.upsert(a, POINTS());
        await fx.store.upsert(b, [{ id: 'b', kind: 'facts', vector: vec(1, 0, 0) }]);
        const all = await fx.store.snapshot({ allUsers: true });
        expect(all.selector).toEqual({ allUsers: true });
        const mine = all.records.filter((r) => r.userId === a.userId || r.userId === b.userId);
        expect(mine).toHaveLength(6);

        // A's partition is replaced by the snapshot's contents; a partition not in it is left alone.
        const c = randomScope();
        await fx.store.upsert(c, [{ id: 'c', kind: 'facts', vector: vec(1, 0, 0) }]);
        await fx.store.upsert(a, [{ id: 'extra', kind: 'facts', vector: vec(1, 0, 0) }]);
        const snapA = await fx.store.snapshot({ userId: a.userId });
        await fx.store.delete(a, ['x']);
        await fx.store.upsert(a, [{ id: 'later', kind: 'facts', vector: vec(0, 1, 0) }]);
        expect(await fx.store.restore(snapA, { userId: a.userId })).toEqual({ records: 6, partitions: 1 });
        expect((await ids(a, vec(1, 0, 0))).sort()).toEqual(['extra', 'neg', 'x', 'xy', 'y', 'z']);
        expect(await fx.store.count(c)).toBe(1);
        expect(await fx.store.count(b)).toBe(1);
      });

      it('refuses bad snapshots and changes nothing', async () => {
        const scope = randomScope();
        await fx.store.upsert(scope, POINTS());
        const snap = await fx.store.snapshot({ userId: scope.userId });
        const d = fx.store.dimensions;
        const wrongDims = {
          ...snap,
          dimensions: d + 1,
          records: snap.records.map((r) => ({ ...r, vector: [...r.vector, 0] })),
        };
        await expectKiokuError(fx.store.restore(wrongDims), 'VALIDATION');
        const oneShort = {
          ...snap,
          records: [{ ...snap.records[0]!, vector: snap.records[0]!.vector.slice(1) }],
        };
        await expectKiokuError(fx.store.restore(oneShort), 'VALIDATION');
        await expectKiokuError(fx.store.restore({ ...snap, schemaVersion: 99 }), 'UNSUPPORTED');
        await expectKiokuError(fx.store.restore({ ...snap, kind: 'facts' }), 'VALIDATION');
        await expectKiokuError(
          fx.store.restore({ ...snap, records: [snap.records[0], snap.records[0]] }),
          'VALIDATION',
        );
        await expectKiokuError(
          fx.store.restore({ ...snap, records: [{ ...snap.records[0]!, userId: '../x' }] }),
          'VALIDATION',
        );
        await expectKiokuError(fx.store.restore(snap, { userId: randomId('user') }), 'SCOPE');
        await expectKiokuError(fx.store.restore('nonsense'), 'VALIDATION');
        await expectKiokuError(fx.store.snapshot({ userId: '../x' }), 'VALIDATION');
        expect(await fx.store.count(scope)).toBe(5);
      });
    });

    describe('concurrent writes lose nothing', () => {
      it('50 concurrent upserts are all counted', async () => {
        const scope = randomScope();
        await times(50, (i) => fx.store.upsert(scope, [{ id: `p${i}`, kind: 'facts', vector: vec(1, i) }]));
        expect(await fx.store.count(scope)).toBe(50);
        expect(await fx.store.search(scope, { vector: vec(1, 0), limit: 1000 })).toHaveLength(50);
      });

      it('concurrent upserts and deletes of different ids all apply', async () => {
        const scope = randomScope();
        await fx.store.upsert(
          scope,
          Array.from({ length: 20 }, (_, i) => ({ id: `old${i}`, kind: 'facts', vector: vec(1, i) })),
        );
        await Promise.all([
          ...Array.from({ length: 20 }, (_, i) => fx.store.delete(scope, [`old${i}`])),
          ...Array.from({ length: 20 }, (_, i) =>
            fx.store.upsert(scope, [{ id: `new${i}`, kind: 'facts', vector: vec(i, 1) }]),
          ),
        ]);
        expect(await fx.store.count(scope)).toBe(20);
        const hits = await fx.store.search(scope, { vector: vec(1, 1), limit: 1000 });
        expect(hits.every((hit) => hit.id.startsWith('new'))).toBe(true);
      });

      it.skipIf(!h.createTwin)('two instances over the same storage, interleaved', async () => {
        const scope = randomScope();
        const twin = await fx.twin();
        const stores = [fx.store, twin];
        await times(50, (i) =>
          stores[i % 2]!.upsert(scope, [{ id: `p${i}`, kind: 'facts', vector: vec(1, i) }]),
        );
        expect(await fx.store.count(scope)).toBe(50);
        expect(await twin.count(scope)).toBe(50);
      });
    });
  });
}
