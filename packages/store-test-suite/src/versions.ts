import { randomUUID } from 'node:crypto';
import { KiokuError, type Scope } from '@kioku/core';
import { SESSION_DEFAULTS, WORKING_DEFAULTS } from '@kioku/core/adapter';
import type { FactStore, PlanStore, SessionStore, WorkingMemoryStore } from '@kioku/core/store';
import { describe, expect, it } from 'vitest';
import type { Fixture, StoreHarness } from './harness.js';
import { expectKiokuError, randomScope, randomThreadScope } from './helpers.js';

/**
 * Get-then-write with the version that was read, read again on CONFLICT: what every caller that edits a
 * record it read (an app, a tool, a background pass) does. Returns how many conflicts it met.
 */
export async function writeWithRetry(attempt: () => Promise<unknown>): Promise<number> {
  for (let conflicts = 0; conflicts < 200; conflicts++) {
    try {
      await attempt();
      return conflicts;
    } catch (error) {
      if (!(error instanceof KiokuError) || error.code !== 'CONFLICT') throw error;
    }
  }
  throw new Error('200 conflicts in a row: the versions never settle');
}

/** Two writers over two store instances, each doing get-then-write `rounds` times, interleaved. */
async function twoWriters(rounds: number, write: (writer: 0 | 1, round: number) => Promise<number>) {
  const conflicts = await Promise.all(
    ([0, 1] as const).map(async (writer) => {
      let total = 0;
      for (let round = 0; round < rounds; round++) total += await write(writer, round);
      return total;
    }),
  );
  return conflicts[0]! + conflicts[1]!;
}

/** Versions and expected-version checks of facts (issue: no lost updates). */
export function factVersionTests(fx: Fixture<FactStore>, h: StoreHarness<FactStore>): void {
  describe('versions: no lost updates', () => {
    it('a new fact is at version 1 and every update adds one', async () => {
      const scope = randomScope();
      const created = await fx.store.create(scope, { content: 'v1' });
      expect(created.version).toBe(1);
      const updated = await fx.store.update(scope, created.id, { content: 'v2' });
      expect(updated.version).toBe(2);
      await fx.store.update(scope, created.id, { title: 'T' });
      expect((await fx.store.get(scope, created.id))?.version).toBe(3);
      expect((await fx.store.list(scope))[0]?.version).toBe(3);
      expect((await fx.store.search(scope, { query: 'v2' }))[0]?.fact.version).toBe(3);
    });

    it('an update with a stale expectedVersion is CONFLICT and changes nothing', async () => {
      const scope = randomScope();
      const fact = await fx.store.create(scope, { content: 'original' });
      await fx.store.update(scope, fact.id, { content: 'changed by someone else' });
      const error = await expectKiokuError(
        fx.store.update(scope, fact.id, { content: 'mine' }, { expectedVersion: 1 }),
        'CONFLICT',
      );
      expect(error.details).toMatchObject({ expectedVersion: 1, actualVersion: 2 });
      expect(error.message).toContain(fact.id);
      const stored = await fx.store.get(scope, fact.id);
      expect(stored).toMatchObject({ content: 'changed by someone else', version: 2 });
    });

    it('an update with the current expectedVersion applies', async () => {
      const scope = randomScope();
      const fact = await fx.store.create(scope, { content: 'original' });
      const updated = await fx.store.update(scope, fact.id, { content: 'mine' }, { expectedVersion: 1 });
      expect(updated).toMatchObject({ content: 'mine', version: 2 });
      expect(await fx.store.get(scope, fact.id)).toEqual(updated);
    });

    it('a delete with a stale expectedVersion is CONFLICT and keeps the fact; the current one deletes', async () => {
      const scope = randomScope();
      const fact = await fx.store.create(scope, { content: 'keep me' });
      await fx.store.update(scope, fact.id, { content: 'edited' });
      await expectKiokuError(fx.store.delete(scope, fact.id, { expectedVersion: 1 }), 'CONFLICT');
      expect((await fx.store.get(scope, fact.id))?.content).toBe('edited');
      expect(await fx.store.delete(scope, fact.id, { expectedVersion: 2 })).toBe(true);
      expect(await fx.store.get(scope, fact.id)).toBeNull();
      expect(await fx.store.delete(scope, fact.id, { expectedVersion: 2 })).toBe(false);
    });

    it('an update of a missing fact is NOT_FOUND whatever the expected version', async () => {
      await expectKiokuError(
        fx.store.update(randomScope(), 'nosuchfact', { content: 'x' }, { expectedVersion: 1 }),
        'NOT_FOUND',
      );
    });

    it('an expectedVersion that is not a positive integer is VALIDATION and changes nothing', async () => {
      const scope = randomScope();
      const fact = await fx.store.create(scope, { content: 'original' });
      for (const expectedVersion of [0, -1, 1.5, Number.NaN, '1' as unknown as number]) {
        await expectKiokuError(
          fx.store.update(scope, fact.id, { content: 'x' }, { expectedVersion }),
          'VALIDATION',
        );
        await expectKiokuError(fx.store.delete(scope, fact.id, { expectedVersion }), 'VALIDATION');
      }
      expect(await fx.store.get(scope, fact.id)).toEqual(fact);
    });

    it('an edit of a stale read fails on any instance, so concurrent get-then-update loses nothing', async () => {
      const scope = randomScope();
      const other = h.createTwin ? await fx.twin() : fx.store;
      const stores = [fx.store, other] as const;
      const fact = await fx.store.create(scope, { content: 'log:' });
      await twoWriters(10, (writer, round) =>
        writeWithRetry(async () => {
          const current = (await stores[writer].get(scope, fact.id))!;
          const content = `${current.content} w${writer}r${round}`;
          await stores[writer].update(scope, fact.id, { content }, { expectedVersion: current.version });
        }),
      );
      const final = (await fx.store.get(scope, fact.id))!;
      expect(final.version).toBe(21);
      for (const writer of [0, 1])
        for (let round = 0; round < 10; round++) expect(final.content).toContain(`w${writer}r${round}`);
    });

    it.skipIf(!h.createTwin)('a write based on another instance’s stale read is CONFLICT', async () => {
      const scope = randomScope();
      const twin = await fx.twin();
      const fact = await fx.store.create(scope, { content: 'shared' });
      const readByTwin = (await twin.get(scope, fact.id))!;
      await fx.store.update(scope, fact.id, { content: 'first writer' }, { expectedVersion: 1 });
      await expectKiokuError(
        twin.update(scope, fact.id, { content: 'second writer' }, { expectedVersion: readByTwin.version }),
        'CONFLICT',
      );
      expect((await twin.get(scope, fact.id))?.content).toBe('first writer');
    });
  });
}

/** Versions and expected-version checks of plans. */
export function planVersionTests(fx: Fixture<PlanStore>, h: StoreHarness<PlanStore>): void {
  describe('versions: no lost updates', () => {
    it('a new plan is at version 1 and every edit adds one', async () => {
      const scope = randomThreadScope();
      expect((await fx.store.create(scope, { goal: 'g', steps: ['a'] })).version).toBe(1);
      expect((await fx.store.updateStep(scope, '1', { status: 'in_progress' })).version).toBe(2);
      expect((await fx.store.addStep(scope, { description: 'b' })).version).toBe(3);
      expect((await fx.store.addContextNote(scope, 'note')).version).toBe(4);
      expect((await fx.store.complete(scope)).version).toBe(5);
      expect((await fx.store.get(scope))?.version).toBe(5);
    });

    it('every edit and delete with a stale expectedVersion is CONFLICT and changes nothing', async () => {
      const scope = randomThreadScope();
      await fx.store.create(scope, { goal: 'g', steps: ['a'] });
      await fx.store.addContextNote(scope, 'someone else');
      const before = await fx.store.get(scope);
      const stale = { expectedVersion: 1 };
      await expectKiokuError(fx.store.updateStep(scope, '1', { status: 'completed' }, stale), 'CONFLICT');
      await expectKiokuError(fx.store.addStep(scope, { description: 'b' }, stale), 'CONFLICT');
      await expectKiokuError(fx.store.addContextNote(scope, 'mine', stale), 'CONFLICT');
      await expectKiokuError(fx.store.complete(scope, stale), 'CONFLICT');
      await expectKiokuError(fx.store.delete(scope, stale), 'CONFLICT');
      expect(await fx.store.get(scope)).toEqual(before);
      expect(await fx.store.delete(scope, { expectedVersion: 2 })).toBe(true);
      expect(await fx.store.has(scope)).toBe(false);
    });

    it('an edit with the current expectedVersion applies', async () => {
      const scope = randomThreadScope();
      await fx.store.create(scope, { goal: 'g', steps: ['a'] });
      const plan = await fx.store.updateStep(scope, '1', { status: 'completed' }, { expectedVersion: 1 });
      expect(plan).toMatchObject({ version: 2, steps: [{ status: 'completed' }] });
    });

    it('a bad expectedVersion is VALIDATION and changes nothing', async () => {
      const scope = randomThreadScope();
      const plan = await fx.store.create(scope, { goal: 'g', steps: ['a'] });
      await expectKiokuError(fx.store.complete(scope, { expectedVersion: 0 }), 'VALIDATION');
      await expectKiokuError(fx.store.delete(scope, { expectedVersion: -3 }), 'VALIDATION');
      expect(await fx.store.get(scope)).toEqual(plan);
    });

    it('concurrent get-then-edit on two instances loses nothing', async () => {
      const scope = randomThreadScope();
      const other = h.createTwin ? await fx.twin() : fx.store;
      const stores = [fx.store, other] as const;
      await fx.store.create(scope, { goal: 'g' });
      await twoWriters(8, (writer, round) =>
        writeWithRetry(async () => {
          const current = (await stores[writer].get(scope))!;
          // An edit that depends on what was read: insert after the last step seen.
          const last = current.steps.at(-1)?.id;
          await stores[writer].addStep(
            scope,
            { description: `w${writer}r${round}`, ...(last === undefined ? {} : { afterStepId: last }) },
            { expectedVersion: current.version },
          );
        }),
      );
      const plan = (await fx.store.get(scope))!;
      expect(plan.version).toBe(17);
      expect(plan.steps.map((s) => s.description).sort()).toEqual(
        [0, 1].flatMap((w) => Array.from({ length: 8 }, (_, r) => `w${w}r${r}`)).sort(),
      );
    });
  });
}

/** Let `ms` pass for a store: on the suite's clock when the store follows it, else really (a short TTL). */
export async function letTimePass(fx: Fixture<unknown>, ms: number): Promise<void> {
  if (fx.caps.controllableClock) fx.ctx.clock.advance(ms);
  else await new Promise((resolve) => setTimeout(resolve, ms));
}

/** Versions and expected-version checks of working-memory entries (issue: no lost updates). */
export function workingVersionTests(
  fx: Fixture<WorkingMemoryStore>,
  h: StoreHarness<WorkingMemoryStore>,
): void {
  const key = 'session/s1/counter';
  // Long enough for a round trip to a real server, short enough to wait for where time cannot be moved.
  const shortTtl = 600;

  describe('versions: no lost updates', () => {
    it('a new key is at version 1 and every set of the live entry adds one', async () => {
      const scope = randomScope();
      expect((await fx.store.set(scope, key, 'a')).version).toBe(1);
      expect((await fx.store.set(scope, key, 'b')).version).toBe(2);
      const third = await fx.store.set(scope, key, 'c', { tags: ['t'] });
      expect(third.version).toBe(3);
      expect(await fx.store.get(scope, key)).toEqual(third);
      expect((await fx.store.list(scope))[0]?.version).toBe(3);
      expect((await fx.store.search(scope, { query: 'counter' }))[0]?.entry.version).toBe(3);
      expect((await fx.store.snapshot({ userId: scope.userId })).records).toEqual([third]);
    });

    it('a key set again after delete or expiry starts over at version 1', async () => {
      const scope = randomScope();
      await fx.store.set(scope, key, 'a');
      await fx.store.set(scope, key, 'b');
      await fx.store.delete(scope, key);
      expect((await fx.store.set(scope, key, 'c', { ttlMs: shortTtl })).version).toBe(1);
      await fx.store.set(scope, key, 'd', { ttlMs: shortTtl });
      await letTimePass(fx, shortTtl + 50);
      expect(await fx.store.get(scope, key)).toBeNull();
      expect((await fx.store.set(scope, key, 'e')).version).toBe(1);
    });

    it('expectedVersion 0 writes only while the key has no live entry (an expired one counts as none)', async () => {
      const scope = randomScope();
      const first = await fx.store.set(scope, key, 'mine', { expectedVersion: 0, ttlMs: shortTtl });
      expect(first.version).toBe(1);
      const error = await expectKiokuError(
        fx.store.set(scope, key, 'theirs', { expectedVersion: 0 }),
        'CONFLICT',
      );
      expect(error.details).toMatchObject({ expectedVersion: 0, actualVersion: 1 });
      expect(error.message).toContain(key);
      expect(await fx.store.get(scope, key)).toEqual(first);
      await letTimePass(fx, shortTtl + 50);
      const after = await fx.store.set(scope, key, 'theirs', { expectedVersion: 0 });
      expect(after).toMatchObject({ value: 'theirs', version: 1 });
    });

    it('a set with a stale expectedVersion is CONFLICT and writes nothing; the current one applies', async () => {
      const scope = randomScope();
      await fx.store.set(scope, key, 'v1');
      const current = await fx.store.set(scope, key, 'v2 by someone else', { category: 'c' });
      const error = await expectKiokuError(
        fx.store.set(scope, key, 'mine', { expectedVersion: 1, ttlMs: 1000 }),
        'CONFLICT',
      );
      expect(error.details).toMatchObject({ expectedVersion: 1, actualVersion: 2 });
      expect(await fx.store.get(scope, key)).toEqual(current);
      const mine = await fx.store.set(scope, key, 'mine', { expectedVersion: 2 });
      expect(mine).toMatchObject({ value: 'mine', version: 3 });
      expect(await fx.store.get(scope, key)).toEqual(mine);
    });

    it('a set expecting a version of a key without a live entry is CONFLICT (actual 0) and writes nothing', async () => {
      const scope = randomScope();
      const error = await expectKiokuError(fx.store.set(scope, key, 'x', { expectedVersion: 1 }), 'CONFLICT');
      expect(error.details).toMatchObject({ expectedVersion: 1, actualVersion: 0 });
      expect(await fx.store.get(scope, key)).toBeNull();
      expect(await fx.store.list(scope)).toEqual([]);
    });

    it('a delete with expectedVersion: stale or absent is CONFLICT and deletes nothing; current deletes', async () => {
      const scope = randomScope();
      await fx.store.set(scope, key, 'v1');
      const current = await fx.store.set(scope, key, 'v2');
      const stale = await expectKiokuError(fx.store.delete(scope, key, { expectedVersion: 1 }), 'CONFLICT');
      expect(stale.details).toMatchObject({ expectedVersion: 1, actualVersion: 2 });
      expect(await fx.store.get(scope, key)).toEqual(current);
      expect(await fx.store.delete(scope, key, { expectedVersion: 2 })).toBe(true);
      expect(await fx.store.get(scope, key)).toBeNull();
      const absent = await expectKiokuError(fx.store.delete(scope, key, { expectedVersion: 2 }), 'CONFLICT');
      expect(absent.details).toMatchObject({ expectedVersion: 2, actualVersion: 0 });
    });

    it('a CONFLICT at the namespace cap evicts nothing', async () => {
      const scope = randomScope();
      const cap = WORKING_DEFAULTS.maxEntriesPerNamespace;
      for (let i = 0; i < cap; i++) {
        await fx.store.set(scope, `session/s1/k${i}`, `v${i}`);
        await fx.tick();
      }
      await expectKiokuError(fx.store.set(scope, 'session/s1/new', 'x', { expectedVersion: 3 }), 'CONFLICT');
      const keys = (await fx.store.list(scope, 'session/s1')).map((e) => e.key);
      expect(keys).toHaveLength(cap);
      expect(keys).toContain('session/s1/k0');
    });

    it('a bad expectedVersion is VALIDATION and changes nothing', async () => {
      const scope = randomScope();
      const kept = await fx.store.set(scope, key, 'keep');
      for (const expectedVersion of [-1, 1.5, Number.NaN, 2 ** 31, '1' as unknown as number]) {
        await expectKiokuError(fx.store.set(scope, key, 'x', { expectedVersion }), 'VALIDATION');
        await expectKiokuError(fx.store.delete(scope, key, { expectedVersion }), 'VALIDATION');
      }
      // A delete never creates, so "only if absent" means nothing to it.
      await expectKiokuError(fx.store.delete(scope, key, { expectedVersion: 0 }), 'VALIDATION');
      expect(await fx.store.get(scope, key)).toEqual(kept);
    });

    it('snapshots carry the version and restore keeps it', async () => {
      const scope = randomScope({ agent: true });
      await fx.store.set(scope, key, 'a', { ttlMs: 60 * 60_000 });
      await fx.store.set(scope, key, 'b', { ttlMs: 60 * 60_000 });
      const entry = await fx.store.set(scope, key, 'c', { ttlMs: 60 * 60_000 });
      const snapshot = await fx.store.snapshot({ userId: scope.userId });
      expect(snapshot.records).toEqual([entry]);
      const other = await fx.fresh();
      await other.restore(snapshot);
      expect(await other.get(scope, key)).toEqual(entry);
      expect((await other.set(scope, key, 'd', { expectedVersion: 3 })).version).toBe(4);
    });

    it('concurrent compare-and-set increments on two instances lose nothing', async () => {
      const scope = randomScope();
      const other = h.createTwin ? await fx.twin() : fx.store;
      const stores = [fx.store, other] as const;
      await twoWriters(10, (writer) =>
        writeWithRetry(async () => {
          const current = await stores[writer].get(scope, key);
          const next = Number(current?.value ?? '0') + 1;
          await stores[writer].set(scope, key, String(next), { expectedVersion: current?.version ?? 0 });
        }),
      );
      expect(await fx.store.get(scope, key)).toMatchObject({ value: '20', version: 20 });
    });

    it('two instances setting a key only if absent, at once: exactly one wins', async () => {
      const scope = randomScope();
      const other = h.createTwin ? await fx.twin() : fx.store;
      const outcomes = await Promise.allSettled(
        [fx.store, other, fx.store, other].map((store, i) =>
          store.set(scope, key, `writer ${i}`, { expectedVersion: 0 }),
        ),
      );
      const won = outcomes.filter((o) => o.status === 'fulfilled');
      expect(won).toHaveLength(1);
      for (const o of outcomes) {
        if (o.status === 'rejected') expect(o.reason).toMatchObject({ code: 'CONFLICT' });
      }
      expect((await fx.store.get(scope, key))?.value).toBe(
        (won[0] as PromiseFulfilledResult<{ value: string }>).value.value,
      );
    });
  });
}

/** Versions and expected-version checks of session k-v entries (issue: no lost updates). */
export function sessionKvVersionTests(fx: Fixture<SessionStore>, h: StoreHarness<SessionStore>): void {
  const key = 'counter';
  const keys = async (scope: Scope, id: string) => (await fx.store.kvList(scope, id)).map((e) => e.key);
  const session = async (options: { agent?: boolean } = {}) => {
    const scope = randomScope(options);
    return { scope, id: (await fx.store.create(scope)).id };
  };

  describe('k-v versions: no lost updates', () => {
    it('a new key is at version 1 and every set adds one', async () => {
      const { scope, id } = await session();
      expect(await fx.store.kvSet(scope, id, key, 'a')).toMatchObject({ key, value: 'a', version: 1 });
      expect((await fx.store.kvSet(scope, id, key, 'b')).version).toBe(2);
      const third = await fx.store.kvSet(scope, id, key, 'c');
      expect(third).toMatchObject({ value: 'c', version: 3 });
      expect(await fx.store.kvGet(scope, id, key)).toEqual(third);
      expect(await fx.store.kvList(scope, id)).toEqual([third]);
      expect((await fx.store.snapshot({ userId: scope.userId })).records[0]?.kv).toEqual([third]);
    });

    it('a key set again after a delete or an eviction starts over at version 1', async () => {
      const { scope, id } = await session();
      await fx.store.kvSet(scope, id, key, 'a');
      await fx.store.kvSet(scope, id, key, 'b');
      await fx.store.kvDelete(scope, id, key);
      expect((await fx.store.kvSet(scope, id, key, 'c')).version).toBe(1);
      await fx.store.kvSet(scope, id, key, 'd');
      for (let i = 0; i < SESSION_DEFAULTS.kvCap; i++) await fx.store.kvSet(scope, id, `k${i}`, 'x');
      expect(await fx.store.kvGet(scope, id, key)).toBeNull(); // evicted, the oldest key
      expect((await fx.store.kvSet(scope, id, key, 'e')).version).toBe(1);
    });

    it('expectedVersion 0 writes only while the key has no entry', async () => {
      const { scope, id } = await session();
      const first = await fx.store.kvSet(scope, id, key, 'mine', { expectedVersion: 0 });
      expect(first.version).toBe(1);
      const error = await expectKiokuError(
        fx.store.kvSet(scope, id, key, 'theirs', { expectedVersion: 0 }),
        'CONFLICT',
      );
      expect(error.details).toMatchObject({ expectedVersion: 0, actualVersion: 1 });
      expect(error.message).toContain(key);
      expect(await fx.store.kvGet(scope, id, key)).toEqual(first);
      await fx.store.kvDelete(scope, id, key);
      expect(await fx.store.kvSet(scope, id, key, 'theirs', { expectedVersion: 0 })).toMatchObject({
        value: 'theirs',
        version: 1,
      });
    });

    it('a set with a stale expectedVersion is CONFLICT and writes nothing (not even the order); the current one applies', async () => {
      const { scope, id } = await session();
      await fx.store.kvSet(scope, id, key, 'v1');
      const current = await fx.store.kvSet(scope, id, key, 'v2 by someone else');
      await fx.store.kvSet(scope, id, 'later', 'x');
      const error = await expectKiokuError(
        fx.store.kvSet(scope, id, key, 'mine', { expectedVersion: 1 }),
        'CONFLICT',
      );
      expect(error.details).toMatchObject({ expectedVersion: 1, actualVersion: 2 });
      expect(await fx.store.kvGet(scope, id, key)).toEqual(current);
      expect(await keys(scope, id)).toEqual([key, 'later']);
      const mine = await fx.store.kvSet(scope, id, key, 'mine', { expectedVersion: 2 });
      expect(mine).toMatchObject({ value: 'mine', version: 3 });
      expect(await fx.store.kvGet(scope, id, key)).toEqual(mine);
      expect(await keys(scope, id)).toEqual(['later', key]);
    });

    it('a set expecting a version of a key without an entry is CONFLICT (actual 0) and writes nothing', async () => {
      const { scope, id } = await session();
      const error = await expectKiokuError(
        fx.store.kvSet(scope, id, key, 'x', { expectedVersion: 1 }),
        'CONFLICT',
      );
      expect(error.details).toMatchObject({ expectedVersion: 1, actualVersion: 0 });
      expect(await fx.store.kvList(scope, id)).toEqual([]);
    });

    it('a delete with expectedVersion: stale or absent is CONFLICT and deletes nothing; current deletes', async () => {
      const { scope, id } = await session();
      await fx.store.kvSet(scope, id, key, 'v1');
      const current = await fx.store.kvSet(scope, id, key, 'v2');
      const stale = await expectKiokuError(
        fx.store.kvDelete(scope, id, key, { expectedVersion: 1 }),
        'CONFLICT',
      );
      expect(stale.details).toMatchObject({ expectedVersion: 1, actualVersion: 2 });
      expect(await fx.store.kvGet(scope, id, key)).toEqual(current);
      expect(await fx.store.kvDelete(scope, id, key, { expectedVersion: 2 })).toBe(true);
      expect(await fx.store.kvGet(scope, id, key)).toBeNull();
      const absent = await expectKiokuError(
        fx.store.kvDelete(scope, id, key, { expectedVersion: 2 }),
        'CONFLICT',
      );
      expect(absent.details).toMatchObject({ expectedVersion: 2, actualVersion: 0 });
    });

    it('a CONFLICT at the cap evicts nothing', async () => {
      const { scope, id } = await session();
      const cap = SESSION_DEFAULTS.kvCap;
      for (let i = 0; i < cap; i++) await fx.store.kvSet(scope, id, `k${i}`, `v${i}`);
      await expectKiokuError(fx.store.kvSet(scope, id, 'new', 'x', { expectedVersion: 3 }), 'CONFLICT');
      await expectKiokuError(fx.store.kvSet(scope, id, 'k5', 'x', { expectedVersion: 0 }), 'CONFLICT');
      const after = await keys(scope, id);
      expect(after).toHaveLength(cap);
      expect(after[0]).toBe('k0');
      expect(after.at(-1)).toBe(`k${cap - 1}`);
    });

    it('a bad expectedVersion is VALIDATION and changes nothing', async () => {
      const { scope, id } = await session();
      const kept = await fx.store.kvSet(scope, id, key, 'keep');
      for (const expectedVersion of [-1, 1.5, Number.NaN, 2 ** 31, '1' as unknown as number]) {
        await expectKiokuError(fx.store.kvSet(scope, id, key, 'x', { expectedVersion }), 'VALIDATION');
        await expectKiokuError(fx.store.kvDelete(scope, id, key, { expectedVersion }), 'VALIDATION');
      }
      // A delete never creates, so "only if absent" means nothing to it.
      await expectKiokuError(fx.store.kvDelete(scope, id, key, { expectedVersion: 0 }), 'VALIDATION');
      await expectKiokuError(fx.store.kvSet(scope, id, key, 'x', { expected: 1 } as never), 'VALIDATION');
      expect(await fx.store.kvList(scope, id)).toEqual([kept]);
    });

    it('an unknown session is NOT_FOUND whatever the expected version', async () => {
      const { scope } = await session();
      const unknown = randomUUID();
      await expectKiokuError(fx.store.kvSet(scope, unknown, key, 'x', { expectedVersion: 0 }), 'NOT_FOUND');
      await expectKiokuError(fx.store.kvDelete(scope, unknown, key, { expectedVersion: 1 }), 'NOT_FOUND');
    });

    it('snapshots carry the version and restore keeps it; entries of older snapshots read as 1', async () => {
      const { scope, id } = await session({ agent: true });
      await fx.store.kvSet(scope, id, key, 'a');
      await fx.store.kvSet(scope, id, key, 'b');
      const entry = await fx.store.kvSet(scope, id, key, 'c');
      const snapshot = await fx.store.snapshot({ userId: scope.userId });
      expect(snapshot.records[0]?.kv).toEqual([entry]);
      const other = await fx.fresh();
      await other.restore(snapshot);
      expect(await other.kvGet(scope, id, key)).toEqual(entry);
      expect((await other.kvSet(scope, id, key, 'd', { expectedVersion: 3 })).version).toBe(4);
      // A snapshot from before versions: its entries have none.
      const old = {
        ...snapshot,
        records: snapshot.records.map((r) => ({ ...r, kv: r.kv.map(({ version: _v, ...rest }) => rest) })),
      };
      await other.restore(old);
      expect(await other.kvGet(scope, id, key)).toEqual({ ...entry, version: 1 });
    });

    it('concurrent compare-and-set increments on two instances lose nothing', async () => {
      const { scope, id } = await session();
      const other = h.createTwin ? await fx.twin() : fx.store;
      const stores = [fx.store, other] as const;
      await twoWriters(10, (writer) =>
        writeWithRetry(async () => {
          const current = await stores[writer].kvGet(scope, id, key);
          const next = Number(current?.value ?? '0') + 1;
          await stores[writer].kvSet(scope, id, key, String(next), {
            expectedVersion: current?.version ?? 0,
          });
        }),
      );
      expect(await fx.store.kvGet(scope, id, key)).toMatchObject({ value: '20', version: 20 });
    });

    it('two instances setting a key only if absent, at once: exactly one wins', async () => {
      const { scope, id } = await session();
      const other = h.createTwin ? await fx.twin() : fx.store;
      const outcomes = await Promise.allSettled(
        [fx.store, other, fx.store, other].map((store, i) =>
          store.kvSet(scope, id, key, `writer ${i}`, { expectedVersion: 0 }),
        ),
      );
      const won = outcomes.filter((o) => o.status === 'fulfilled');
      expect(won).toHaveLength(1);
      for (const o of outcomes) {
        if (o.status === 'rejected') expect(o.reason).toMatchObject({ code: 'CONFLICT' });
      }
      expect(await fx.store.kvGet(scope, id, key)).toEqual((won[0] as PromiseFulfilledResult<unknown>).value);
    });
  });
}
