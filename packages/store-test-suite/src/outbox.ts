import type { ChatMessage, Scope } from '@kioku/core';
import { SESSION_DEFAULTS } from '@kioku/core/adapter';
import type { SessionStore } from '@kioku/core/store';
import { describe, expect, it } from 'vitest';
import type { Fixture, StoreHarness } from './harness.js';
import { expectKiokuError, randomScope, times } from './helpers.js';

const CAP = SESSION_DEFAULTS.transcriptCap;

const turn = (i: number): ChatMessage[] => [
  { role: 'user', content: `question ${i}` },
  { role: 'assistant', content: `answer ${i}` },
];

/**
 * The transcript as an outbox: an append with a turn id is stored once however often it is retried, and
 * an append with `pending` marks its session pending in the same atomic step, until a clear at the mark
 * read (a later append moves the mark on, so a clear that raced it fails and nothing is missed).
 */
export function transcriptOutboxTests(fx: Fixture<SessionStore>, h: StoreHarness<SessionStore>): void {
  const contents = async (scope: Scope, id: string) =>
    (await fx.store.transcriptReadLast(scope, id, 100_000)).map((e) => e.content);

  describe('turn ids: a retried append is stored once', () => {
    it('an append whose turn id the session holds appends nothing and returns []', async () => {
      const scope = randomScope();
      const { id } = await fx.store.create(scope);
      const first = await fx.store.transcriptAppend(scope, id, turn(1), { turnId: 't-1' });
      expect(first.map((e) => e.turnId)).toEqual(['t-1', undefined]);
      expect(await fx.store.transcriptAppend(scope, id, turn(1), { turnId: 't-1' })).toEqual([]);
      await fx.store.transcriptAppend(scope, id, turn(2), { turnId: 't-2' });
      await fx.store.transcriptAppend(scope, id, turn(3));
      await fx.store.transcriptAppend(scope, id, turn(3));
      expect(await contents(scope, id)).toEqual([
        'question 1',
        'answer 1',
        'question 2',
        'answer 2',
        'question 3',
        'answer 3',
        'question 3',
        'answer 3',
      ]);
      const read = await fx.store.transcriptReadLast(scope, id, 100);
      expect(read.map((e) => e.turnId ?? null)).toEqual(['t-1', null, 't-2', null, null, null, null, null]);
    });

    it('a turn id is per session: another session (or user) appends its own', async () => {
      const scope = randomScope();
      const other = randomScope();
      const a = await fx.store.create(scope);
      const b = await fx.store.create(scope);
      const c = await fx.store.create(other);
      for (const [s, id] of [
        [scope, a.id],
        [scope, b.id],
        [other, c.id],
      ] as const) {
        expect(await fx.store.transcriptAppend(s, id, turn(1), { turnId: 'same' })).toHaveLength(2);
      }
    });

    it('concurrent appends of one turn id store it once', async () => {
      const scope = randomScope();
      const { id } = await fx.store.create(scope);
      const stores = h.createTwin ? [fx.store, await fx.twin()] : [fx.store];
      const results = await times(10, (i) =>
        stores[i % stores.length]!.transcriptAppend(scope, id, turn(1), { turnId: 'retried' }),
      );
      expect(results.filter((r) => r.length > 0)).toHaveLength(1);
      expect(await contents(scope, id)).toEqual(['question 1', 'answer 1']);
    });

    it('a bad turn id is VALIDATION and appends nothing', async () => {
      const scope = randomScope();
      const { id } = await fx.store.create(scope);
      for (const bad of ['', '../x', 'a b', 'x'.repeat(1000)]) {
        await expectKiokuError(fx.store.transcriptAppend(scope, id, turn(1), { turnId: bad }), 'VALIDATION');
      }
      expect(await contents(scope, id)).toEqual([]);
    });
  });

  describe('pending sessions: marked with the append, cleared at the mark read', () => {
    it('a pending append lists the session; a plain append does not', async () => {
      const scope = randomScope();
      const plain = await fx.store.create(scope);
      await fx.store.transcriptAppend(scope, plain.id, turn(0));
      expect(await fx.store.listPending()).toEqual([]);
      const { id } = await fx.store.create(scope);
      await fx.store.transcriptAppend(scope, id, turn(1), { pending: true });
      const listed = await fx.store.listPending();
      expect(listed).toEqual([
        {
          userId: scope.userId,
          sessionId: id.toLowerCase(),
          mark: listed[0]!.mark,
          since: expect.any(String),
        },
      ]);
      expect(await fx.store.listPending({ scope })).toEqual(listed);
    });

    it('clears only at the mark it read: an append after the read keeps the session pending', async () => {
      const scope = randomScope();
      const { id } = await fx.store.create(scope);
      await fx.store.transcriptAppend(scope, id, turn(1), { pending: true });
      const [read] = await fx.store.listPending({ scope });
      await fx.store.transcriptAppend(scope, id, turn(2), { pending: true });
      const [moved] = await fx.store.listPending({ scope });
      expect(moved!.mark).toBeGreaterThan(read!.mark);
      expect(moved!.since).toBe(read!.since); // waiting since the first pending append
      expect(await fx.store.clearPending(scope, id, read!.mark)).toBe(false);
      expect(await fx.store.listPending({ scope })).toHaveLength(1);
      expect(await fx.store.clearPending(scope, id, moved!.mark)).toBe(true);
      expect(await fx.store.listPending()).toEqual([]);
      expect(await fx.store.clearPending(scope, id, moved!.mark)).toBe(false);
      // Marks never come back: the stale one cannot clear the next pending append.
      await fx.store.transcriptAppend(scope, id, turn(3), { pending: true });
      expect(await fx.store.clearPending(scope, id, read!.mark)).toBe(false);
      expect(await fx.store.clearPending(scope, id, moved!.mark)).toBe(false);
      expect(await fx.store.listPending({ scope })).toHaveLength(1);
    });

    it('a pending session keeps its entries past the cap until they are cleared, then the cap applies', async () => {
      // The outbox drops nothing workers have not read: the oldest entries go only once the session is clear.
      const scope = randomScope();
      const { id } = await fx.store.create(scope);
      const message = (i: number): ChatMessage => ({ role: 'user', content: `m${i}` });
      await fx.store.transcriptAppend(scope, id, message(0));
      await fx.store.transcriptAppend(
        scope,
        id,
        Array.from({ length: CAP }, (_, i) => message(i + 1)),
        { pending: true },
      );
      for (let i = CAP + 1; i <= CAP + 5; i++)
        await fx.store.transcriptAppend(scope, id, message(i), { pending: true });
      const kept = await contents(scope, id);
      expect(kept).toHaveLength(CAP + 6);
      expect(kept[0]).toBe('m0');
      const [pending] = await fx.store.listPending({ scope });
      expect(await fx.store.clearPending(scope, id, pending!.mark)).toBe(true);
      const trimmed = await contents(scope, id);
      expect(trimmed).toHaveLength(CAP);
      expect(trimmed[0]).toBe('m6');
      expect(trimmed.at(-1)).toBe(`m${CAP + 5}`);
      // Clear again: an append without pending keeps the last cap entries, as it always did.
      await fx.store.transcriptAppend(scope, id, message(CAP + 6));
      expect((await contents(scope, id))[0]).toBe('m7');
    });

    it('a retried pending append (same turn id) does not move the mark', async () => {
      const scope = randomScope();
      const { id } = await fx.store.create(scope);
      await fx.store.transcriptAppend(scope, id, turn(1), { pending: true, turnId: 't1' });
      const [before] = await fx.store.listPending({ scope });
      await fx.store.transcriptAppend(scope, id, turn(1), { pending: true, turnId: 't1' });
      expect(await fx.store.listPending({ scope })).toEqual([before]);
    });

    it('lists the longest waiting first, of every user or of one user and agent, within the limit', async () => {
      const alice = randomScope();
      const aliceAgent = { ...alice, agentId: 'agent-1' };
      const bob = randomScope();
      const ids: string[] = [];
      for (const scope of [bob, alice, aliceAgent, alice]) {
        const { id } = await fx.store.create(scope);
        await fx.store.transcriptAppend(scope, id, turn(ids.length), { pending: true });
        ids.push(id.toLowerCase());
        await fx.tick(10);
      }
      const all = await fx.store.listPending();
      expect(all.map((p) => p.sessionId)).toEqual(ids);
      expect(all.map((p) => p.agentId)).toEqual([undefined, undefined, 'agent-1', undefined]);
      expect((await fx.store.listPending({ limit: 2 })).map((p) => p.sessionId)).toEqual(ids.slice(0, 2));
      expect((await fx.store.listPending({ scope: alice })).map((p) => p.sessionId)).toEqual([
        ids[1],
        ids[3],
      ]);
      expect((await fx.store.listPending({ scope: aliceAgent })).map((p) => p.sessionId)).toEqual([ids[2]]);
    });

    it('another user cannot clear a session; deleting it or erasing its user takes it off', async () => {
      const scope = randomScope();
      const intruder = randomScope();
      const first = await fx.store.create(scope);
      const second = await fx.store.create(scope);
      for (const { id } of [first, second]) {
        await fx.store.transcriptAppend(scope, id, turn(1), { pending: true });
      }
      const [listed] = await fx.store.listPending({ scope });
      expect(await fx.store.clearPending(intruder, listed!.sessionId, listed!.mark)).toBe(false);
      expect(await fx.store.listPending({ scope })).toHaveLength(2);
      await fx.store.delete(scope, first.id);
      expect((await fx.store.listPending()).map((p) => p.sessionId)).toEqual([second.id.toLowerCase()]);
      await fx.store.eraseUser(scope.userId);
      expect(await fx.store.listPending()).toEqual([]);
    });

    it('bad queries and marks are VALIDATION', async () => {
      const scope = randomScope();
      const { id } = await fx.store.create(scope);
      await expectKiokuError(fx.store.listPending({ limit: 0 }), 'VALIDATION');
      await expectKiokuError(fx.store.listPending({ scope: { userId: '../x' } }), 'VALIDATION');
      await expectKiokuError(fx.store.clearPending(scope, id, 1.5), 'VALIDATION');
      await expectKiokuError(fx.store.clearPending(scope, id, -1), 'VALIDATION');
    });
  });
}
