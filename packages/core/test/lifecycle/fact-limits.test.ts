import { describe, expect, it } from 'vitest';
import type { Scope } from '../../src/index.js';
import { ChangesetLog } from '../../src/memory/changesets/changeset-log.js';
import type { FactLimits } from '../../src/memory/limits/fact-limits.js';
import { enforceFactLimits, planEviction } from '../../src/memory/limits/fact-limits.js';
import { RecallLog } from '../../src/memory/limits/recall-log.js';
import { alice, bob, DAY, NOW, seed, world } from './harness.js';

/** Ten facts created a day apart (day 0 … day 9 of the month before NOW), and the pieces to evict them. */
async function tenFacts() {
  const { stores, clock } = world();
  const facts = await seed(
    stores,
    clock,
    alice,
    Array.from({ length: 10 }, (_, i) => `fact number ${i}`),
  );
  const recalls = new RecallLog(stores.sessions);
  const changesets = new ChangesetLog(stores.sessions);
  const plan = (limits: FactLimits, scope: Scope = alice) =>
    planEviction({ facts: stores.facts, recalls, scope, limits, clock });
  return { stores, clock, facts, recalls, changesets, plan };
}

const deleted = (cs: { operations: { op: string; before?: { content: string } }[] }) =>
  cs.operations.map((op) => (op.op === 'delete' ? op.before!.content : `?${op.op}`));

describe('fact limits: per-user cap, eviction policy and decay', () => {
  it('under the cap, proposes nothing', async () => {
    const { plan } = await tenFacts();
    expect((await plan({ maxFacts: 10 })).operations).toEqual([]);
  });

  it('least recently used: the oldest writes go first, and a recall counts as a use', async () => {
    const { plan, recalls, facts, clock } = await tenFacts();
    // Facts 0 and 1 were shown to the model today: they are the most recently used now.
    clock.set(NOW);
    await recalls.record(alice, [facts[0]!.id, facts[1]!.id]);
    const cs = await plan({ maxFacts: 7 });
    expect(cs.pass).toBe('eviction');
    expect(deleted(cs)).toEqual(['fact number 2', 'fact number 3', 'fact number 4']);
    expect(cs.operations[0]!.reason).toMatch(/limit of 7 facts: least recently used/);
  });

  it('an update is a use too', async () => {
    const { plan, stores, facts } = await tenFacts();
    await stores.facts.update(alice, facts[0]!.id, { content: 'fact number 0, corrected' });
    expect(deleted(await plan({ maxFacts: 9 }))).toEqual(['fact number 1']);
  });

  it('least recalled: the facts shown in the fewest turns go first, ties by least recent use', async () => {
    const { plan, recalls, facts, clock } = await tenFacts();
    // Fact 9 (the newest) was never recalled; facts 0-2 (the oldest) were, in three turns; facts 3-8 once
    // each, an hour apart (so fact 3's use is the oldest of those).
    const ids = facts.map((f) => f.id);
    for (let turn = 0; turn < 3; turn++) await recalls.record(alice, ids.slice(0, 3));
    for (const id of ids.slice(3, 9)) {
      clock.advance(3_600_000);
      await recalls.record(alice, [id]);
    }
    const cs = await plan({ maxFacts: 8, policy: 'least-recalled' });
    expect(deleted(cs)).toEqual(['fact number 9', 'fact number 3']);
    expect(cs.operations[0]!.reason).toMatch(/shown to the model in 0 recent turns/);
  });

  it('decay forgets facts unused for longer than forgetUnusedAfterDays, whatever the cap', async () => {
    const { plan, recalls, facts, clock } = await tenFacts();
    // The clock is at NOW; facts were written 30 … 21 days ago. Fact 0 was recalled 5 days ago.
    clock.set(NOW - 5 * DAY);
    await recalls.record(alice, [facts[0]!.id]);
    clock.set(NOW);
    const cs = await plan({ maxFacts: 100, forgetUnusedAfterDays: 25 });
    expect(deleted(cs)).toEqual(['fact number 1', 'fact number 2', 'fact number 3', 'fact number 4']);
    expect(cs.operations[0]!.reason).toMatch(/over 25 days/);
  });

  it('never proposes a pinned fact, and says so when pinned facts alone exceed the cap', async () => {
    const { stores, clock } = world();
    await seed(stores, clock, alice, [
      { content: 'pinned one', metadata: { pinned: true } as never },
      { content: 'pinned two', metadata: { pinned: true } as never },
      'plain',
    ]);
    const cs = await planEviction({
      facts: stores.facts,
      recalls: new RecallLog(stores.sessions),
      scope: alice,
      limits: { maxFacts: 1 },
      clock,
    });
    expect(deleted(cs)).toEqual(['plain']);
    expect(cs.notes?.[0]).toMatch(/2 protected facts alone exceed the limit of 1/);
  });

  it("only sees the scope's own facts and recalls", async () => {
    const { plan, stores, clock, recalls } = await tenFacts();
    const bobs = await seed(stores, clock, bob, ['bob fact']);
    await recalls.record(bob, [bobs[0]!.id]);
    expect(deleted(await plan({ maxFacts: 1 }, bob))).toEqual([]);
    expect((await plan({ maxFacts: 9 })).operations).toHaveLength(1);
  });

  it('enforcing applies the deletes, keeps the changeset, and a revert brings the facts back exactly', async () => {
    const { stores, recalls, changesets, clock } = await tenFacts();
    const before = await stores.facts.list(alice);
    const { changeset, result } = await enforceFactLimits({
      facts: stores.facts,
      recalls,
      scope: alice,
      limits: { maxFacts: 8 },
      changesets,
      clock,
    });
    expect(result?.applied).toHaveLength(2);
    expect(await stores.facts.count(alice)).toBe(8);
    expect((await changesets.get(alice, changeset.id))?.changeset.status).toBe('applied');
    await changesets.revert(stores.facts, alice, changeset.id);
    const after = await stores.facts.list(alice);
    const strip = (f: { id: string; content: string; createdAt: string; metadata: unknown }) => ({
      id: f.id,
      content: f.content,
      createdAt: f.createdAt,
      metadata: f.metadata,
    });
    expect(after.map(strip)).toEqual(before.map(strip));
  });

  it('a fact edited after the plan read it is a conflict and stays', async () => {
    const { stores, recalls, changesets, clock, plan, facts } = await tenFacts();
    const cs = await plan({ maxFacts: 9 });
    expect(deleted(cs)).toEqual(['fact number 0']);
    await stores.facts.update(alice, facts[0]!.id, { content: 'fact number 0, just used' });
    const { result } = await changesets.apply(stores.facts, alice, cs);
    expect(result.conflicts).toHaveLength(1);
    expect(await stores.facts.get(alice, facts[0]!.id)).not.toBeNull();
    // Enforcing again finds the next least recently used.
    const again = await enforceFactLimits({
      facts: stores.facts,
      recalls,
      scope: alice,
      limits: { maxFacts: 9 },
      changesets,
      clock,
    });
    expect(deleted(again.changeset)).toEqual(['fact number 1']);
  });

  it('refuses limits that make no sense with VALIDATION', async () => {
    const { plan } = await tenFacts();
    await expect(plan({ maxFacts: 0 })).rejects.toMatchObject({ code: 'VALIDATION' });
    await expect(plan({ maxFacts: 5, policy: 'random' as never })).rejects.toMatchObject({
      code: 'VALIDATION',
    });
  });
});

describe('recall log', () => {
  it('counts the turns that showed each fact and the latest, per user, durably in the session store', async () => {
    const { stores, clock } = world();
    const log = new RecallLog(stores.sessions);
    clock.set(NOW - DAY);
    await log.record(alice, ['a', 'b', 'a']);
    clock.set(NOW);
    await log.record(alice, ['a']);
    await log.record(alice, []);
    await log.record(bob, ['b']);
    const stats = await new RecallLog(stores.sessions).stats(alice);
    expect(stats.get('a')).toEqual({ lastRecalledAt: new Date(NOW).toISOString(), recalls: 2 });
    expect(stats.get('b')).toEqual({ lastRecalledAt: new Date(NOW - DAY).toISOString(), recalls: 1 });
    expect((await log.stats(bob)).get('a')).toBeUndefined();
  });
});
