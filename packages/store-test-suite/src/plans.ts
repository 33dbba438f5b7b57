import type { Scope } from '@kioku/core';
import { InMemoryPlanStore, PLAN_LIMITS, type PlanStore, type ThreadScope } from '@kioku/core/store';
import { describe, expect, it } from 'vitest';
import { type StoreHarness, useHarness } from './harness.js';
import {
  expectKiokuError,
  HOSTILE_IDS,
  isoNow,
  label,
  randomId,
  randomScope,
  randomThreadScope,
  sized,
  times,
} from './helpers.js';
import { snapshotTests } from './snapshot.js';
import { textDomainTests } from './text-domain.js';
import { planVersionTests } from './versions.js';

const secondThread = (scope: Scope): ThreadScope => ({ ...scope, threadId: `${scope.threadId}-2` });

/** Conformance tests for a PlanStore. */
export function planStoreSuite(h: StoreHarness<PlanStore>): void {
  describe(`PlanStore conformance: ${h.name}`, () => {
    const fx = useHarness(h);

    planVersionTests(fx, h);

    describe('one text domain on every backend', () => {
      textDomainTests(fx, [
        {
          field: 'plan goal',
          scope: () => randomThreadScope(),
          write: (s, scope, text) => s.create(scope, { goal: text }),
          read: async (s, scope) => (await s.get(scope))?.goal,
        },
        {
          field: 'plan step',
          scope: () => randomThreadScope(),
          write: (s, scope, text) => s.create(scope, { goal: 'g', steps: [text] }),
          read: async (s, scope) => (await s.get(scope))?.steps[0]?.description,
        },
      ]);
    });
    const at = () => isoNow(fx.ctx.clock);

    describe('create, get, has, delete', () => {
      it('creates a plan with pending steps numbered "1".."n"', async () => {
        const scope = randomThreadScope({ agent: true });
        const plan = await fx.store.create(scope, { goal: 'Ship v1', steps: ['Design', 'Build', 'Test'] });
        expect(plan).toMatchObject({
          userId: scope.userId,
          agentId: scope.agentId,
          threadId: scope.threadId,
          goal: 'Ship v1',
          contextNotes: [],
          isComplete: false,
        });
        expect(plan.steps.map((s) => [s.id, s.description, s.status])).toEqual([
          ['1', 'Design', 'pending'],
          ['2', 'Build', 'pending'],
          ['3', 'Test', 'pending'],
        ]);
        expect(plan.completedAt).toBeUndefined();
        if (fx.caps.controllableClock) {
          expect(plan.createdAt).toBe(at());
          expect(plan.updatedAt).toBe(at());
        }
        expect(await fx.store.get(scope)).toEqual(plan);
        expect(await fx.store.has(scope)).toBe(true);
        expect((await fx.store.snapshot({ userId: scope.userId })).records).toEqual([plan]);
      });

      it('creates a plan without steps', async () => {
        const scope = randomThreadScope();
        expect((await fx.store.create(scope, { goal: 'Think' })).steps).toEqual([]);
      });

      it('a second create replaces the thread’s plan', async () => {
        const scope = randomThreadScope();
        await fx.store.create(scope, { goal: 'Old', steps: ['a', 'b', 'c'] });
        const next = await fx.store.create(scope, { goal: 'New', steps: ['x'] });
        expect(await fx.store.get(scope)).toEqual(next);
        expect(next.steps.map((s) => s.id)).toEqual(['1']);
        expect((await fx.store.snapshot({ userId: scope.userId })).records).toEqual([next]);
      });

      it('a thread without a plan: get null, has false, delete false', async () => {
        const scope = randomThreadScope();
        expect(await fx.store.get(scope)).toBeNull();
        expect(await fx.store.has(scope)).toBe(false);
        expect(await fx.store.delete(scope)).toBe(false);
      });

      it('delete removes the plan: true once, then false', async () => {
        const scope = randomThreadScope();
        await fx.store.create(scope, { goal: 'Temporary', steps: ['one'] });
        expect(await fx.store.delete(scope)).toBe(true);
        expect(await fx.store.delete(scope)).toBe(false);
        expect(await fx.store.get(scope)).toBeNull();
        expect(await fx.store.has(scope)).toBe(false);
        await expectKiokuError(fx.store.complete(scope), 'NOT_FOUND');
      });
    });

    describe('steps', () => {
      it('updateStep changes status and notes of that step only', async () => {
        const scope = randomThreadScope();
        const plan = await fx.store.create(scope, { goal: 'g', steps: ['a', 'b'] });
        await fx.tick(1000);
        const next = await fx.store.updateStep(scope, '2', { status: 'in_progress', notes: 'started' });
        expect(next.steps[0]).toEqual(plan.steps[0]);
        expect(next.steps[1]).toMatchObject({
          id: '2',
          description: 'b',
          status: 'in_progress',
          notes: 'started',
        });
        expect(Date.parse(next.updatedAt)).toBeGreaterThan(Date.parse(plan.updatedAt));
        if (fx.caps.controllableClock) expect(next.steps[1]?.updatedAt).toBe(at());
        expect(next.createdAt).toBe(plan.createdAt);
        const done = await fx.store.updateStep(scope, '2', { status: 'completed' });
        expect(done.steps[1]).toMatchObject({ status: 'completed', notes: 'started' });
        expect(await fx.store.get(scope)).toEqual(done);
      });

      it('addStep appends at the end or inserts after a step; ids are never reused', async () => {
        const scope = randomThreadScope();
        await fx.store.create(scope, { goal: 'g', steps: ['a', 'b', 'c'] });
        const inserted = await fx.store.addStep(scope, { description: 'a2', afterStepId: '1' });
        expect(inserted.steps.map((s) => [s.id, s.description])).toEqual([
          ['1', 'a'],
          ['4', 'a2'],
          ['2', 'b'],
          ['3', 'c'],
        ]);
        expect(inserted.steps[1]?.status).toBe('pending');
        const appended = await fx.store.addStep(scope, { description: 'd' });
        expect(appended.steps.map((s) => s.id)).toEqual(['1', '4', '2', '3', '5']);
        const afterLast = await fx.store.addStep(scope, { description: 'e', afterStepId: '5' });
        expect(afterLast.steps.map((s) => s.id)).toEqual(['1', '4', '2', '3', '5', '6']);
        expect(await fx.store.get(scope)).toEqual(afterLast);
      });

      it('missing steps and plans are NOT_FOUND', async () => {
        const scope = randomThreadScope();
        const empty = randomThreadScope();
        await expectKiokuError(fx.store.updateStep(empty, '1', { status: 'completed' }), 'NOT_FOUND');
        await expectKiokuError(fx.store.addStep(empty, { description: 'x' }), 'NOT_FOUND');
        await expectKiokuError(fx.store.addContextNote(empty, 'note'), 'NOT_FOUND');
        await expectKiokuError(fx.store.complete(empty), 'NOT_FOUND');
        expect(await fx.store.has(empty)).toBe(false);
        const plan = await fx.store.create(scope, { goal: 'g', steps: ['a'] });
        await expectKiokuError(fx.store.updateStep(scope, '9', { status: 'completed' }), 'NOT_FOUND');
        await expectKiokuError(fx.store.addStep(scope, { description: 'x', afterStepId: '9' }), 'NOT_FOUND');
        expect(await fx.store.get(scope)).toEqual(plan);
      });
    });

    describe('context notes and completion', () => {
      it('addContextNote appends timestamped notes in order', async () => {
        const scope = randomThreadScope();
        await fx.store.create(scope, { goal: 'g' });
        await fx.store.addContextNote(scope, 'first');
        await fx.tick(1000);
        const plan = await fx.store.addContextNote(scope, 'second');
        expect(plan.contextNotes.map((n) => n.text)).toEqual(['first', 'second']);
        if (fx.caps.controllableClock) expect(plan.contextNotes[1]?.at).toBe(at());
        expect(Date.parse(plan.contextNotes[1]!.at)).toBeGreaterThan(Date.parse(plan.contextNotes[0]!.at));
        expect(await fx.store.get(scope)).toEqual(plan);
      });

      it(`keeps the newest ${PLAN_LIMITS.contextNotes} notes`, async () => {
        const scope = randomThreadScope();
        await fx.store.create(scope, { goal: 'g' });
        const total = PLAN_LIMITS.contextNotes + 5;
        for (let i = 0; i < total; i++) await fx.store.addContextNote(scope, `note ${i}`);
        const notes = (await fx.store.get(scope))!.contextNotes.map((n) => n.text);
        expect(notes).toHaveLength(PLAN_LIMITS.contextNotes);
        expect(notes[0]).toBe('note 5');
        expect(notes.at(-1)).toBe(`note ${total - 1}`);
      });

      it('complete marks the plan complete with a timestamp', async () => {
        const scope = randomThreadScope();
        const plan = await fx.store.create(scope, { goal: 'g', steps: ['a'] });
        await fx.tick(1000);
        const done = await fx.store.complete(scope);
        expect(done.isComplete).toBe(true);
        expect(done.completedAt).toBeDefined();
        if (fx.caps.controllableClock) expect(done.completedAt).toBe(at());
        expect(done.steps).toEqual(plan.steps);
        expect(await fx.store.get(scope)).toEqual(done);
      });
    });

    describe('the thread id is required', () => {
      it('every operation without threadId is VALIDATION', async () => {
        const scope = randomThreadScope();
        await fx.store.create(scope, { goal: 'g', steps: ['a'] });
        const noThread = { userId: scope.userId } as ThreadScope;
        const s = fx.store;
        await expectKiokuError(s.create(noThread, { goal: 'g' }), 'VALIDATION');
        await expectKiokuError(s.get(noThread), 'VALIDATION');
        await expectKiokuError(s.has(noThread), 'VALIDATION');
        await expectKiokuError(s.updateStep(noThread, '1', { status: 'completed' }), 'VALIDATION');
        await expectKiokuError(s.addStep(noThread, { description: 'x' }), 'VALIDATION');
        await expectKiokuError(s.addContextNote(noThread, 'x'), 'VALIDATION');
        await expectKiokuError(s.complete(noThread), 'VALIDATION');
        await expectKiokuError(s.delete(noThread), 'VALIDATION');
        expect((await s.get(scope))?.steps[0]?.status).toBe('pending');
      });
    });

    describe('scope isolation', () => {
      it('user B with the same thread id never sees user A’s plan', async () => {
        const a = randomThreadScope();
        const b: ThreadScope = { userId: randomScope().userId, threadId: a.threadId };
        const plan = await fx.store.create(a, { goal: 'A’s goal', steps: ['a'] });
        expect(await fx.store.get(b)).toBeNull();
        expect(await fx.store.has(b)).toBe(false);
        await expectKiokuError(fx.store.updateStep(b, '1', { status: 'completed' }), 'NOT_FOUND');
        await expectKiokuError(fx.store.addStep(b, { description: 'x' }), 'NOT_FOUND');
        await expectKiokuError(fx.store.complete(b), 'NOT_FOUND');
        expect(await fx.store.delete(b)).toBe(false);
        expect(await fx.store.get(a)).toEqual(plan);
        expect((await fx.store.snapshot({ userId: b.userId })).records).toEqual([]);
      });

      it('another agent or another thread of the same user has its own plan', async () => {
        const scope = randomThreadScope();
        const agent = { ...scope, agentId: randomId('agent') };
        const other = { ...scope, threadId: randomId('thread') };
        const p0 = await fx.store.create(scope, { goal: 'no agent' });
        expect(await fx.store.get(agent)).toBeNull();
        expect(await fx.store.get(other)).toBeNull();
        const p1 = await fx.store.create(agent, { goal: 'with agent' });
        const p2 = await fx.store.create(other, { goal: 'other thread' });
        expect(await fx.store.get(scope)).toEqual(p0);
        expect(await fx.store.get(agent)).toEqual(p1);
        expect(await fx.store.get(other)).toEqual(p2);
        await fx.store.delete(agent);
        expect(await fx.store.get(scope)).toEqual(p0);
      });
    });

    describe('hostile ids are refused with VALIDATION and change nothing', () => {
      for (const bad of HOSTILE_IDS) {
        it(label(bad), async () => {
          const scope = randomThreadScope({ agent: true });
          const plan = await fx.store.create(scope, { goal: 'keep', steps: ['a'] });
          const hostiles: ThreadScope[] = [
            { ...scope, userId: bad },
            { ...scope, agentId: bad },
            { ...scope, threadId: bad },
          ];
          for (const hostile of hostiles) {
            await expectKiokuError(fx.store.create(hostile, { goal: 'x' }), 'VALIDATION');
            await expectKiokuError(fx.store.get(hostile), 'VALIDATION');
            await expectKiokuError(fx.store.updateStep(hostile, '1', { status: 'completed' }), 'VALIDATION');
            await expectKiokuError(fx.store.addContextNote(hostile, 'x'), 'VALIDATION');
            await expectKiokuError(fx.store.delete(hostile), 'VALIDATION');
          }
          expect(await fx.store.get(scope)).toEqual(plan);
        });
      }
    });

    describe('bad input is refused with VALIDATION and changes nothing', () => {
      const cases: Array<[string, (s: PlanStore, scope: ThreadScope) => Promise<unknown>]> = [
        ['empty goal', (s, scope) => s.create(scope, { goal: '  ' })],
        ['goal over the limit', (s, scope) => s.create(scope, { goal: sized(PLAN_LIMITS.goalChars + 1) })],
        ['non-string goal', (s, scope) => s.create(scope, { goal: 7 as never })],
        ['an empty step', (s, scope) => s.create(scope, { goal: 'g', steps: ['ok', ''] })],
        [
          'too many steps',
          (s, scope) =>
            s.create(scope, { goal: 'g', steps: Array.from({ length: PLAN_LIMITS.steps + 1 }, () => 's') }),
        ],
        ['unknown status', (s, scope) => s.updateStep(scope, '1', { status: 'done' as never })],
        ['an empty step update', (s, scope) => s.updateStep(scope, '1', {})],
        [
          'notes over the limit',
          (s, scope) => s.updateStep(scope, '1', { notes: sized(PLAN_LIMITS.notesChars + 1) }),
        ],
        ['an empty new step', (s, scope) => s.addStep(scope, { description: '' })],
        ['an empty context note', (s, scope) => s.addContextNote(scope, '')],
        [
          'a context note over the limit',
          (s, scope) => s.addContextNote(scope, sized(PLAN_LIMITS.notesChars + 1)),
        ],
      ];
      for (const [name, call] of cases) {
        it(name, async () => {
          const scope = randomThreadScope();
          const plan = await fx.store.create(scope, { goal: 'keep', steps: ['a'] });
          await expectKiokuError(call(fx.store, scope), 'VALIDATION');
          expect(await fx.store.get(scope)).toEqual(plan);
        });
      }

      it(`a plan holds at most ${PLAN_LIMITS.steps} steps`, async () => {
        const scope = randomThreadScope();
        const steps = Array.from({ length: PLAN_LIMITS.steps }, (_, i) => `step ${i}`);
        const plan = await fx.store.create(scope, { goal: 'big', steps });
        // A full plan is out of room, not bad input: CAPACITY, as for the other caps.
        await expectKiokuError(fx.store.addStep(scope, { description: 'one too many' }), 'CAPACITY');
        expect(await fx.store.get(scope)).toEqual(plan);
      });
    });

    describe('concurrent writes lose nothing', () => {
      it('50 concurrent addStep calls add 50 steps with distinct ids', async () => {
        const scope = randomThreadScope();
        await fx.store.create(scope, { goal: 'g' });
        await times(50, (i) => fx.store.addStep(scope, { description: `step ${i}` }));
        const steps = (await fx.store.get(scope))!.steps;
        expect(steps).toHaveLength(50);
        expect(new Set(steps.map((s) => s.id)).size).toBe(50);
        expect(steps.map((s) => s.description).sort()).toEqual(
          Array.from({ length: 50 }, (_, i) => `step ${i}`).sort(),
        );
      });

      it('concurrent step updates and notes all apply', async () => {
        const scope = randomThreadScope();
        const descriptions = Array.from({ length: 20 }, (_, i) => `step ${i}`);
        await fx.store.create(scope, { goal: 'g', steps: descriptions });
        await Promise.all([
          ...descriptions.map((_, i) => fx.store.updateStep(scope, String(i + 1), { status: 'completed' })),
          ...descriptions.map((_, i) => fx.store.addContextNote(scope, `note ${i}`)),
        ]);
        const plan = (await fx.store.get(scope))!;
        expect(plan.steps.every((s) => s.status === 'completed')).toBe(true);
        expect(plan.contextNotes).toHaveLength(20);
      });

      it.skipIf(!h.createTwin)('two instances over the same storage, interleaved', async () => {
        const scope = randomThreadScope();
        const twin = await fx.twin();
        await fx.store.create(scope, { goal: 'g' });
        const stores = [fx.store, twin];
        await times(50, (i) => stores[i % 2]!.addStep(scope, { description: `step ${i}` }));
        expect((await fx.store.get(scope))!.steps).toHaveLength(50);
        expect(await twin.get(scope)).toEqual(await fx.store.get(scope));
      });
    });

    snapshotTests(fx, {
      kind: 'plans',
      scope: () => randomThreadScope({ agent: true }),
      reference: (ctx) => new InMemoryPlanStore({ clock: ctx.clock }),
      async seed(store, scope, f) {
        const thread = scope as ThreadScope;
        await store.create(thread, { goal: 'Migrate the database', steps: ['Back up', 'Migrate', 'Verify'] });
        await f.tick();
        await store.updateStep(thread, '1', { status: 'completed', notes: 'done at night' });
        await store.addStep(thread, { description: 'Announce', afterStepId: '3' });
        await store.addContextNote(thread, 'The user prefers downtime on Sundays');
        await f.tick();
        await store.create(secondThread(scope), { goal: 'Plan a trip', steps: ['Book flights'] });
        await store.complete(secondThread(scope));
      },
      async mutate(store, scope) {
        const thread = scope as ThreadScope;
        await store.updateStep(thread, '2', { status: 'blocked' });
        await store.addContextNote(thread, 'added later');
        await store.delete(secondThread(scope));
      },
      view: async (store, scope) => [
        await store.get(scope as ThreadScope),
        await store.get(secondThread(scope)),
      ],
      userIdOf: (plan) => plan.userId,
      withBadId: (plan) => ({ ...plan, id: '*' }),
    });
  });
}
