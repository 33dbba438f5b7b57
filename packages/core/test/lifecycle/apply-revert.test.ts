import { describe, expect, it } from 'vitest';
import { type Fact, isKiokuError } from '../../src/index.js';
import { applyChangeset, revertChangeset } from '../../src/memory/changesets/apply.js';
import type { Changeset } from '../../src/memory/changesets/changeset.js';
import { ChangesetLog, isChangesetSession } from '../../src/memory/changesets/changeset-log.js';
import { consolidate } from '../../src/memory/dream/consolidate.js';
import { dream } from '../../src/memory/dream/dream.js';
import { alice, contentOf, DAY, scriptedJsonModel, seed, world } from './harness.js';

/** The fields a revert restores exactly. */
const exact = (f: Fact) => ({
  id: f.id,
  title: f.title,
  content: f.content,
  category: f.category,
  tags: f.tags,
  metadata: f.metadata,
  provenance: f.provenance,
  eventTime: f.eventTime,
  createdAt: f.createdAt,
});

async function seeded() {
  const { stores, clock } = world();
  const facts = await seed(stores, clock, alice, [
    { content: 'Tea', category: 'drinks', tags: ['t'], metadata: { m: '1' } },
    'Green tea',
    'Chicago',
    'Noise',
  ]);
  await stores.facts.update(alice, facts[0]!.id, { title: 'A title' });
  // Event times on the refined and the deleted fact: a revert must bring them back too.
  await stores.facts.update(alice, facts[2]!.id, { eventTime: '2023-05-08T10:00:00.000Z' });
  await stores.facts.update(alice, facts[3]!.id, { eventTime: '2022-01-02T00:00:00.000Z' });
  const current = await contentOf(stores, alice);
  const [a, b, c, d] = current;
  const reply = {
    merges: [
      {
        sourceIds: [a!.id, b!.id],
        content: 'Likes green tea',
        category: 'user-preferences/drinks',
        tags: ['tea'],
      },
    ],
    refinements: [{ id: c!.id, category: 'user-preferences/location', tags: ['city'] }],
    toDelete: [{ id: d!.id }],
  };
  return { stores, clock, current, a: a!, b: b!, c: c!, d: d!, reply };
}

describe('applying and reverting changesets', () => {
  it('a concurrent facts.update between produce and apply is a reported conflict and is not overwritten', async () => {
    const { stores, clock, a, b, c, reply } = await seeded();
    const cs = await consolidate({
      facts: stores.facts,
      model: scriptedJsonModel([reply]),
      scope: alice,
      clock,
    });
    // The user edits two facts the pass read.
    const editedA = await stores.facts.update(alice, a.id, { content: 'Tea, no sugar (user edit)' });
    const editedC = await stores.facts.update(alice, c.id, { content: 'Chicago, since 2024 (user edit)' });
    const { applied, conflicts } = await applyChangeset(stores.facts, alice, cs);
    const merged = cs.operations.find((o) => o.op === 'create')!;
    // The merge of a and b is left whole (a changed): no merged fact beside the edited source.
    expect(conflicts.map((x) => [x.op, x.id, x.code]).sort()).toEqual(
      [
        ['create', merged.op === 'create' ? merged.after.id : '', 'CONFLICT'],
        ['delete', a.id, 'CONFLICT'],
        ['delete', b.id, 'CONFLICT'],
        ['update', c.id, 'CONFLICT'],
      ].sort(),
    );
    expect(conflicts.find((x) => x.op === 'create')!.message).toMatch(/merge .*left whole for review/);
    expect(applied.map((o) => o.op)).toEqual(['delete']);
    expect(await stores.facts.get(alice, a.id)).toEqual(editedA);
    expect(await stores.facts.get(alice, c.id)).toEqual(editedC);
    expect((await contentOf(stores, alice)).map((f) => f.content).sort()).toEqual(
      ['Chicago, since 2024 (user edit)', 'Green tea', 'Tea, no sugar (user edit)'].sort(),
    );
  });

  it('a merge whose source changes while it is applied is undone whole, never left half', async () => {
    const { stores, clock, a, b, reply } = await seeded();
    const cs = await consolidate({
      facts: stores.facts,
      model: scriptedJsonModel([reply]),
      scope: alice,
      clock,
    });
    // The edit lands after the check, between the merged fact's create and b's delete.
    const racing = new Proxy(stores.facts, {
      get(target, key) {
        const value = Reflect.get(target, key, target) as unknown;
        if (key !== 'create' || typeof value !== 'function') {
          return typeof value === 'function' ? value.bind(target) : value;
        }
        return async (...args: Parameters<typeof target.create>) => {
          const created = await target.create(...args);
          await target.update(alice, b.id, { content: 'Green tea, edited meanwhile' });
          return created;
        };
      },
    });
    const { applied, conflicts } = await applyChangeset(racing, alice, cs);
    expect(applied.map((o) => o.op)).toEqual(['update', 'delete']);
    expect(conflicts.map((x) => x.op).sort()).toEqual(['create', 'delete', 'delete']);
    const left = (await contentOf(stores, alice)).map((f) => f.content);
    expect(left).not.toContain('Likes green tea');
    expect(left).toContain('Green tea, edited meanwhile');
    expect((await stores.facts.get(alice, a.id))?.content).toBe('Tea');
  });

  it('dream reports conflicts and keeps the changeset as partially applied', async () => {
    const { stores, clock, c, reply } = await seeded();
    // A model that edits a fact "during" the pass: the user's update lands after the facts were read.
    const model = scriptedJsonModel([]);
    model.complete = async () => {
      await stores.facts.update(alice, c.id, { content: 'Edited during the pass' });
      return { role: 'assistant', content: JSON.stringify(reply) };
    };
    const log = new ChangesetLog(stores.sessions);
    const result = await dream({
      stores,
      model,
      scope: alice,
      clock,
      changesets: log,
      preferences: { enabled: false },
    });
    const pass = result.passes[0]!;
    expect(pass.result!.conflicts).toEqual([
      expect.objectContaining({ op: 'update', id: c.id, code: 'CONFLICT' }),
    ]);
    expect(pass.changeset!.status).toBe('partially_applied');
    expect((await stores.facts.get(alice, c.id))!.content).toBe('Edited during the pass');
    const kept = await log.get(alice, pass.changeset!.id);
    expect(kept!.changeset.status).toBe('partially_applied');
    expect(kept!.conflicts).toHaveLength(1);
  });

  it('revert by id restores the exact prior records (title, metadata, provenance, createdAt)', async () => {
    const { stores, clock, current, reply } = await seeded();
    clock.advance(DAY);
    const log = new ChangesetLog(stores.sessions);
    const result = await dream({
      stores,
      model: scriptedJsonModel([reply]),
      scope: alice,
      clock,
      changesets: log,
      preferences: { enabled: false },
    });
    const id = result.passes[0]!.changeset!.id;
    expect((await contentOf(stores, alice)).map((f) => f.content).sort()).toEqual([
      'Chicago',
      'Likes green tea',
    ]);
    clock.advance(DAY);
    const reverted = await log.revert(stores.facts, alice, id);
    expect(reverted.conflicts).toEqual([]);
    expect(reverted.reverted).toHaveLength(5);
    expect((await contentOf(stores, alice)).map(exact)).toEqual(current.map(exact));
    const kept = await log.get(alice, id);
    expect(kept!.changeset.status).toBe('reverted');
    expect(kept!.revertedAt).toBeDefined();
    // A second revert does nothing.
    expect(await log.revert(stores.facts, alice, id)).toEqual({ reverted: [], conflicts: [] });
  });

  it('two instances reverting one changeset at once agree, undo each operation once and keep it as reverted', async () => {
    const { stores, clock, current, reply } = await seeded();
    const result = await dream({
      stores,
      model: scriptedJsonModel([reply]),
      scope: alice,
      clock,
      preferences: { enabled: false },
    });
    const id = result.passes[0]!.changeset!.id;
    // Two app instances, each with its own log over the one backend.
    const [first, second] = await Promise.all([
      new ChangesetLog(stores.sessions).revert(stores.facts, alice, id),
      new ChangesetLog(stores.sessions).revert(stores.facts, alice, id),
    ]);
    // Each sees every operation undone (by itself or by the other) and nothing in conflict...
    for (const outcome of [first, second]) expect(outcome).toMatchObject({ conflicts: [] });
    expect(first.reverted).toHaveLength(5);
    expect(second.reverted).toHaveLength(5);
    // ...and each write was made once: the refined fact is one version past the apply, not two.
    expect((await contentOf(stores, alice)).map(exact)).toEqual(current.map(exact));
    const refined = result.passes[0]!.result!.applied.find((o) => o.op === 'update')!;
    expect((await stores.facts.get(alice, refined.op === 'update' ? refined.after.id : ''))?.version).toBe(
      refined.op === 'update' ? refined.after.version + 1 : 0,
    );
    const kept = await new ChangesetLog(stores.sessions).get(alice, id);
    expect(kept).toMatchObject({ changeset: { status: 'reverted' }, applied: [] });
    expect(await new ChangesetLog(stores.sessions).revert(stores.facts, alice, id)).toEqual({
      reverted: [],
      conflicts: [],
    });
  });

  for (const partChars of [undefined, 500]) {
    it(`two instances applying one kept changeset at once keep every applied operation${partChars ? ' (split over keys)' : ''}`, async () => {
      const { stores, clock, current, reply } = await seeded();
      const log = new ChangesetLog(stores.sessions, { partChars });
      const result = await dream({
        stores,
        model: scriptedJsonModel([reply]),
        scope: alice,
        clock,
        changesets: log,
        dryRun: true,
        keep: true,
        preferences: { enabled: false },
      });
      const id = result.passes[0]!.changeset!.id;
      // Two app instances apply the proposed changeset at once: each operation is written by one of them.
      const outcomes = await Promise.all([
        new ChangesetLog(stores.sessions, { partChars }).applyKept(stores.facts, alice, id),
        new ChangesetLog(stores.sessions, { partChars }).applyKept(stores.facts, alice, id),
      ]);
      expect(outcomes[0]!.applied.length + outcomes[1]!.applied.length).toBe(5);
      const kept = (await log.get(alice, id))!;
      expect(kept).toMatchObject({ changeset: { status: 'applied' }, conflicts: [] });
      expect(kept.applied).toHaveLength(5);
      // So the revert undoes all of it.
      expect((await log.revert(stores.facts, alice, id)).reverted).toHaveLength(5);
      expect((await contentOf(stores, alice)).map(exact)).toEqual(current.map(exact));
      // Only the record's own keys are left: the header and the parts it names (no parts of older writes).
      const session = (await stores.sessions.list(alice))[0]!;
      const keys = (await stores.sessions.kvList(alice, session.id)).map((e) => e.key);
      const head = JSON.parse((await stores.sessions.kvGet(alice, session.id, `changeset/${id}`))!.value);
      expect(keys.length).toBe(partChars ? 1 + head.parts : 1);
    });
  }

  it('a large record kept before part generations is read, and replacing it removes its parts', async () => {
    const { stores, clock, reply } = await seeded();
    const result = await dream({
      stores,
      model: scriptedJsonModel([reply]),
      scope: alice,
      clock,
      preferences: { enabled: false },
    });
    const id = result.passes[0]!.changeset!.id;
    const log = new ChangesetLog(stores.sessions, { partChars: 500 });
    const kept = (await log.get(alice, id))!;
    // Rewrite it as an older version stored a large record: parts at changeset/<id>/<n>, header { parts }.
    const session = (await stores.sessions.list(alice))[0]!;
    const json = JSON.stringify(kept);
    const parts = Math.ceil(json.length / 500);
    for (const e of await stores.sessions.kvList(alice, session.id))
      await stores.sessions.kvDelete(alice, session.id, e.key);
    for (let i = 0; i < parts; i++)
      await stores.sessions.kvSet(
        alice,
        session.id,
        `changeset/${id}/${i}`,
        json.slice(i * 500, (i + 1) * 500),
      );
    await stores.sessions.kvSet(alice, session.id, `changeset/${id}`, JSON.stringify({ parts }));

    expect(await log.get(alice, id)).toEqual(kept);
    await log.revert(stores.facts, alice, id);
    expect((await log.get(alice, id))?.changeset.status).toBe('reverted');
    const keys = (await stores.sessions.kvList(alice, session.id)).map((e) => e.key);
    expect(keys.filter((k) => /^changeset\/[^/]+\/\d+$/.test(k))).toEqual([]);
  });

  it('a revert does not overwrite a record changed since the apply: conflict reported, the rest undone', async () => {
    const { stores, clock, current, c, reply } = await seeded();
    const cs = await consolidate({
      facts: stores.facts,
      model: scriptedJsonModel([reply]),
      scope: alice,
      clock,
    });
    const { applied } = await applyChangeset(stores.facts, alice, cs);
    const merged = applied.find((o) => o.op === 'create')!;
    const edited = await stores.facts.update(alice, merged.op === 'create' ? merged.after.id : '', {
      tags: ['mine'],
    });
    const { reverted, conflicts } = await revertChangeset(stores.facts, alice, applied);
    expect(conflicts).toEqual([expect.objectContaining({ op: 'create', id: edited.id, code: 'CONFLICT' })]);
    expect(reverted).toHaveLength(4);
    const after = await contentOf(stores, alice);
    expect(after.find((f) => f.id === edited.id)).toEqual(edited);
    expect(after.filter((f) => f.id !== edited.id).map(exact)).toEqual(current.map(exact));
    expect((await stores.facts.get(alice, c.id))!.category).toBe('general');
  });

  it('revert of an unknown id is NOT_FOUND', async () => {
    const { stores } = world();
    const error = await new ChangesetLog(stores.sessions).revert(stores.facts, alice, 'nope').catch((e) => e);
    expect(isKiokuError(error, 'NOT_FOUND')).toBe(true);
  });

  it('kept changesets never show up in search, fact lists or other sessions', async () => {
    const { stores, clock, reply } = await seeded();
    const log = new ChangesetLog(stores.sessions);
    await dream({
      stores,
      model: scriptedJsonModel([reply]),
      scope: alice,
      clock,
      changesets: log,
      preferences: { enabled: false },
    });
    expect(await log.list(alice)).toHaveLength(1);
    // The deleted "Noise" and "Tea" live on only inside the kept changeset.
    expect(await stores.facts.search(alice, { query: 'Noise' })).toEqual([]);
    expect((await contentOf(stores, alice)).some((f) => f.content === 'Noise')).toBe(false);
    const sessions = await stores.sessions.list(alice);
    expect(sessions).toHaveLength(1);
    expect(sessions[0]!.metadata).toEqual({ kioku: 'changesets' });
    expect(isChangesetSession(sessions[0]!)).toBe(true);
    expect(await stores.sessions.transcriptReadLast(alice, sessions[0]!.id, 10)).toEqual([]);
    // Another user sees none of it.
    expect(await log.list({ userId: 'bob' })).toEqual([]);
  });

  it('a changeset larger than one k-v value is split over several keys and read back whole', async () => {
    const { stores, clock, reply } = await seeded();
    const log = new ChangesetLog(stores.sessions, { partChars: 500 });
    const result = await dream({
      stores,
      model: scriptedJsonModel([reply]),
      scope: alice,
      clock,
      changesets: log,
      preferences: { enabled: false },
    });
    const cs: Changeset = result.passes[0]!.changeset!;
    const kept = await log.get(alice, cs.id);
    expect(kept!.changeset).toEqual(cs);
    const session = (await stores.sessions.list(alice))[0]!;
    expect((await stores.sessions.kvList(alice, session.id)).length).toBeGreaterThan(2);
    expect(await log.list(alice)).toEqual([kept]);
  });
});

describe('the changeset session', () => {
  it('is created again when it was deleted (e.g. the user was forgotten) since it was found', async () => {
    const { stores, clock, reply } = await seeded();
    const log = new ChangesetLog(stores.sessions);
    await dream({
      stores,
      model: scriptedJsonModel([reply]),
      scope: alice,
      clock,
      changesets: log,
      preferences: { enabled: false },
    });
    const [first] = await stores.sessions.list(alice);
    await stores.sessions.delete(alice, first!.id);
    expect(await log.list(alice)).toEqual([]);
    await stores.facts.create(alice, { content: 'Another noise' });
    const again = await dream({
      stores,
      model: scriptedJsonModel([{ toDelete: [{ id: (await contentOf(stores, alice)).at(-1)!.id }] }]),
      scope: alice,
      clock,
      changesets: log,
      preferences: { enabled: false },
    });
    expect((await log.list(alice)).map((k) => k.changeset.id)).toEqual([again.passes[0]!.changeset!.id]);
  });
});
