import { describe, expect, it } from 'vitest';
import { type Fact, isKiokuError, KiokuBuilder } from '../../src/index.js';
import { alice, bob, contentOf, scriptedJsonModel, seed, world } from './harness.js';

const exact = (f: Fact) => ({
  id: f.id,
  title: f.title,
  content: f.content,
  category: f.category,
  tags: f.tags,
  metadata: f.metadata,
  provenance: f.provenance,
  createdAt: f.createdAt,
});

async function code(promise: Promise<unknown>): Promise<string | undefined> {
  const error = await promise.catch((e: unknown) => e);
  return isKiokuError(error) ? error.code : `not a Kioku error: ${String(error)}`;
}

async function proposed() {
  const { stores, clock } = world();
  const [a, b, c] = await seed(stores, clock, alice, ['Tea', 'Green tea', 'Noise']);
  const model = scriptedJsonModel([
    {
      merges: [{ sourceIds: [a!.id, b!.id], content: 'Likes green tea', category: 'drinks', tags: ['tea'] }],
      toDelete: [{ id: c!.id }],
    },
  ]);
  const kioku = new KiokuBuilder({ stores, model, clock }).build();
  const before = await contentOf(stores, alice);
  const review = await kioku.passes.dream({
    scope: alice,
    dryRun: true,
    keep: true,
    preferences: { enabled: false },
  });
  const cs = review.passes[0]!.changeset!;
  return { stores, clock, kioku, before, cs, a: a!, b: b!, c: c! };
}

describe('review later, apply by id', () => {
  it('a kept dry run writes no fact; applying it by id writes it and marks it applied; revert restores exactly', async () => {
    const { stores, kioku, before, cs } = await proposed();
    expect(await contentOf(stores, alice)).toEqual(before);
    expect((await kioku.passes.changesets(alice)).map((k) => [k.changeset.id, k.changeset.status])).toEqual([
      [cs.id, 'proposed'],
    ]);

    const result = await kioku.passes.applyKept(alice, cs.id);
    expect(result.conflicts).toEqual([]);
    expect((await contentOf(stores, alice)).map((f) => f.content)).toEqual(['Likes green tea']);
    const [kept] = await kioku.passes.changesets(alice);
    expect(kept!.changeset.status).toBe('applied');
    expect(kept!.appliedAt).toBeDefined();
    expect(await code(kioku.passes.applyKept(alice, cs.id))).toBe('CONFLICT'); // not twice

    const reverted = await kioku.passes.revert(alice, cs.id);
    expect(reverted.conflicts).toEqual([]);
    expect((await contentOf(stores, alice)).map(exact)).toEqual(before.map(exact));
    expect((await kioku.passes.changesets(alice))[0]!.changeset.status).toBe('reverted');
    expect(await code(kioku.passes.applyKept(alice, cs.id))).toBe('CONFLICT');
  });

  it('a record changed since the review is a reported conflict, not overwritten; the rest applies', async () => {
    const { stores, kioku, cs, a, c } = await proposed();
    await stores.facts.update(alice, a.id, { content: 'Tea, edited by the user' });
    const result = await kioku.passes.applyKept(alice, cs.id);
    // a is a source of the merge: the merge (its create and both deletes) is left whole for review.
    expect(result.conflicts.map((x) => [x.op, x.code])).toEqual([
      ['create', 'CONFLICT'],
      ['delete', 'CONFLICT'],
      ['delete', 'CONFLICT'],
    ]);
    expect(result.conflicts.map((x) => x.id)).toContain(a.id);
    expect((await stores.facts.get(alice, a.id))?.content).toBe('Tea, edited by the user');
    expect(await stores.facts.get(alice, c.id)).toBeNull();
    expect((await kioku.passes.changesets(alice))[0]!.changeset.status).toBe('partially_applied');
  });

  it('unknown ids, another user’s changeset and reverting a proposal are refused', async () => {
    const { kioku, cs } = await proposed();
    expect(await code(kioku.passes.applyKept(alice, 'nope'))).toBe('NOT_FOUND');
    expect(await code(kioku.passes.applyKept(bob, cs.id))).toBe('NOT_FOUND');
    expect(await code(kioku.passes.revert(alice, cs.id))).toBe('CONFLICT');
    expect(await kioku.passes.changesets(bob)).toEqual([]);
  });

  it('a dry run without keep keeps nothing', async () => {
    const { stores, clock } = world();
    const [a, b] = await seed(stores, clock, alice, ['Tea', 'Green tea']);
    const model = scriptedJsonModel([
      { merges: [{ sourceIds: [a!.id, b!.id], content: 'Tea', category: 'drinks', tags: [] }] },
    ]);
    const kioku = new KiokuBuilder({ stores, model, clock }).build();
    await kioku.passes.dream({ scope: alice, dryRun: true, preferences: { enabled: false } });
    expect(await kioku.passes.changesets(alice)).toEqual([]);
  });
});
