import { describe, expect, it } from 'vitest';
import { formatChangeset } from '../../src/memory/changesets/changeset.js';
import { ChangesetLog } from '../../src/memory/changesets/changeset-log.js';
import { consolidate, DEFAULT_CONSOLIDATION_DIRECTIVE } from '../../src/memory/dream/consolidate.js';
import { dream } from '../../src/memory/dream/dream.js';
import { alice, bob, contentOf, DAY, NOW, scriptedJsonModel, seed, world } from './harness.js';

describe('dream pass 1: consolidation', () => {
  it('shows the model every fact numbered with id, category, tags and content, and the last 7 days of feedback', async () => {
    const { stores, clock } = world();
    const [a, b] = await seed(stores, clock, alice, [
      { content: 'User lives in Chicago', category: 'user-preferences/location', tags: ['city'] },
      'Likes green tea',
    ]);
    const model = scriptedJsonModel([{}]);
    const feedback = [
      { kind: 'correction', text: 'Too old to show', at: new Date(NOW - 8 * DAY).toISOString() },
      { kind: 'positive', text: 'Great answer', at: new Date(NOW - DAY).toISOString() },
    ];
    const cs = await consolidate({ facts: stores.facts, model, scope: alice, feedback, clock });
    const [system, user] = model.prompts[0]!;
    expect(system!.content.startsWith(DEFAULT_CONSOLIDATION_DIRECTIVE)).toBe(true);
    expect(user!.content).toContain(
      `1. [${a!.id}] (user-preferences/location) [tags: city] User lives in Chicago`,
    );
    expect(user!.content).toContain(`2. [${b!.id}] (general) Likes green tea`);
    expect(user!.content).toContain('positive: Great answer');
    expect(user!.content).not.toContain('Too old to show');
    expect(cs.operations).toEqual([]);
    expect(cs.status).toBe('proposed');
  });

  it('keeps at most the 50 newest feedback signals', async () => {
    const { stores, clock } = world();
    await seed(stores, clock, alice, ['x']);
    const model = scriptedJsonModel([{}]);
    const feedback = Array.from({ length: 60 }, (_, i) => ({
      kind: 'positive',
      text: `signal-${i}.`,
      at: new Date(NOW - (60 - i) * 60_000).toISOString(),
    }));
    await consolidate({ facts: stores.facts, model, scope: alice, feedback, clock });
    const prompt = model.prompts[0]![1]!.content;
    expect(prompt).toContain('(last 7 days, 50)');
    expect(prompt).not.toContain('signal-9.');
    expect(prompt).toContain('signal-10.');
  });

  it('a directive replaces the built-in instructions', async () => {
    const { stores, clock } = world();
    await seed(stores, clock, alice, ['x']);
    const model = scriptedJsonModel([{}]);
    await consolidate({ facts: stores.facts, model, scope: alice, clock, directive: 'My own dream.md' });
    expect(model.prompts[0]![0]!.content.startsWith('My own dream.md')).toBe(true);
    expect(model.prompts[0]![0]!.content).not.toContain(DEFAULT_CONSOLIDATION_DIRECTIVE);
  });

  it('exhaustive deletion: every merge source is deleted even when the model forgets it in toDelete', async () => {
    const { stores, clock } = world();
    const [a, b, c, d, e] = await seed(stores, clock, alice, [
      'Prefers tea',
      'Likes green tea',
      'Drinks tea every morning',
      'Works on Kioku',
      'Noise',
    ]);
    // The model merges three facts but lists only the noise in toDelete.
    const forgetful = () =>
      scriptedJsonModel([
        {
          merges: [
            {
              sourceIds: [c!.id, a!.id, b!.id],
              content: 'Drinks green tea every morning',
              category: 'user-preferences/drinks',
              tags: ['tea'],
              reason: 'three tea facts',
            },
          ],
          toDelete: [{ id: e!.id, reason: 'noise' }],
        },
      ]);
    const cs = await consolidate({ facts: stores.facts, model: forgetful(), scope: alice, clock });
    const deleted = cs.operations.flatMap((o) => (o.op === 'delete' ? [o.before.id] : []));
    expect(new Set(deleted)).toEqual(new Set([a!.id, b!.id, c!.id, e!.id]));
    expect(deleted).toHaveLength(4);
    const result = await dream({
      stores,
      model: forgetful(),
      scope: alice,
      clock,
      preferences: { enabled: false },
    });
    expect(result.passes[0]!.result!.conflicts).toEqual([]);
    const left = await contentOf(stores, alice);
    expect(left.map((f) => f.content)).toEqual(['Drinks green tea every morning', 'Works on Kioku']);
    expect(left[1]!.id).toBe(d!.id);
  });

  it('a merge carries the earliest createdAt of its sources and their provenance', async () => {
    const { stores, clock } = world();
    const [a, b, c] = await seed(stores, clock, alice, [
      'Oldest tea fact',
      { content: 'Middle tea fact', metadata: { requires_user_permission: 'true' } },
      'Newest tea fact',
    ]);
    const model = scriptedJsonModel([
      { merges: [{ sourceIds: [c!.id, b!.id, a!.id], content: 'Tea', category: 'general', tags: [] }] },
    ]);
    const result = await dream({ stores, model, scope: alice, clock, preferences: { enabled: false } });
    const [merged] = await contentOf(stores, alice);
    expect(merged!.createdAt).toBe(a!.createdAt);
    expect(merged!.createdAt < b!.createdAt).toBe(true);
    expect(merged!.provenance).toEqual({ source: 'consolidation', sourceIds: [a!.id, b!.id, c!.id] });
    expect(merged!.metadata).toEqual({ requires_user_permission: 'true' });
    expect(result.passes[0]!.changeset!.status).toBe('applied');
  });

  it('writes anti-patterns/{domain} entries from Correction feedback', async () => {
    const { stores, clock } = world();
    await seed(stores, clock, alice, ['Uses Linux']);
    const feedback = [
      { kind: 'correction', text: 'No! Use grep, not search_files.', at: new Date(NOW - DAY).toISOString() },
    ];
    const model = scriptedJsonModel([
      {
        antiPatterns: [
          {
            domain: 'File Operations',
            content: "Don't use search_files for content search — instead use grep",
            reason: 'correction of 14 June',
          },
        ],
      },
    ]);
    await dream({ stores, model, scope: alice, feedback, clock, preferences: { enabled: false } });
    const [anti] = await stores.facts.list(alice, { category: 'anti-patterns' });
    expect(anti).toMatchObject({
      category: 'anti-patterns/file-operations',
      tags: ['anti-pattern'],
      content: "Don't use search_files for content search — instead use grep",
    });
  });

  it('ignores anti-patterns when there is no Correction feedback, and says so', async () => {
    const { stores, clock } = world();
    await seed(stores, clock, alice, ['Uses Linux']);
    const model = scriptedJsonModel([{ antiPatterns: [{ domain: 'email', content: "Don't email" }] }]);
    const cs = await consolidate({ facts: stores.facts, model, scope: alice, clock });
    expect(cs.operations).toEqual([]);
    expect(cs.notes?.join('\n')).toContain('no Correction feedback');
  });

  it('refines categories and tags as updates; a refinement of a deleted fact is dropped', async () => {
    const { stores, clock } = world();
    const [a, b] = await seed(stores, clock, alice, ['User is in Chicago', 'Noise']);
    const model = scriptedJsonModel([
      {
        refinements: [
          { id: a!.id, category: 'user-preferences/timezone', tags: ['location'] },
          { id: b!.id, tags: ['x'] },
        ],
        toDelete: [{ id: b!.id }],
      },
    ]);
    const cs = await consolidate({ facts: stores.facts, model, scope: alice, clock });
    expect(cs.operations.map((o) => o.op)).toEqual(['update', 'delete']);
    expect(cs.operations[0]).toMatchObject({
      op: 'update',
      after: { category: 'user-preferences/timezone', tags: ['location'] },
    });
    expect(cs.notes?.join('\n')).toContain(`refinement of ${b!.id} was dropped`);
  });

  it('ids of another user are ignored and reported: nothing of either user changes', async () => {
    const { stores, clock } = world();
    const bobs = await seed(stores, clock, bob, ['Bob secret 1', 'Bob secret 2']);
    const mine = await seed(stores, clock, alice, ['Alice fact']);
    const model = scriptedJsonModel([
      {
        merges: [{ sourceIds: bobs.map((f) => f.id), content: 'Merged', category: 'general', tags: [] }],
        toDelete: [{ id: bobs[0]!.id }],
        refinements: [{ id: bobs[1]!.id, category: 'stolen' }],
      },
    ]);
    const result = await dream({ stores, model, scope: alice, clock, preferences: { enabled: false } });
    const cs = result.passes[0]!.changeset!;
    expect(cs.operations).toEqual([]);
    expect(cs.notes?.join('\n')).toContain(bobs[0]!.id);
    expect(cs.notes?.join('\n')).toContain(bobs[1]!.id);
    expect(await contentOf(stores, bob)).toEqual(
      bobs.map((f) => expect.objectContaining({ id: f.id, content: f.content, version: 1 })),
    );
    expect(await contentOf(stores, alice)).toEqual(mine);
  });

  it('malformed output (wrong schema twice) changes nothing and is reported as MODEL_OUTPUT', async () => {
    const { stores, clock } = world();
    const before = await seed(stores, clock, alice, ['A', 'B']);
    const model = scriptedJsonModel([{ merges: 'everything' }, '{"toDelete": [{"id": ']);
    const log = new ChangesetLog(stores.sessions);
    const result = await dream({
      stores,
      model,
      scope: alice,
      clock,
      changesets: log,
      preferences: { enabled: false },
    });
    expect(model.prompts).toHaveLength(2);
    expect(result.passes).toEqual([
      { pass: 'consolidation', error: { code: 'MODEL_OUTPUT', message: expect.any(String) } },
    ]);
    expect(await contentOf(stores, alice)).toEqual(before);
    expect(await log.list(alice)).toEqual([]);
    expect(result.usage.entries).toHaveLength(1);
  });

  it('a dry run produces a readable changeset and writes nothing', async () => {
    const { stores, clock } = world();
    const [a, b, c] = await seed(stores, clock, alice, ['Tea', 'Green tea', 'Chicago']);
    const model = scriptedJsonModel([
      {
        merges: [
          {
            sourceIds: [a!.id, b!.id],
            content: 'Likes green tea',
            category: 'user-preferences/drinks',
            tags: ['tea'],
            reason: 'duplicates',
          },
        ],
        refinements: [{ id: c!.id, category: 'user-preferences/location', reason: 'a location' }],
      },
    ]);
    const sessionsBefore = await stores.sessions.list(alice);
    const result = await dream({
      stores,
      model,
      scope: alice,
      clock,
      dryRun: true,
      preferences: { enabled: false },
    });
    expect(await contentOf(stores, alice)).toEqual([a, b, c]);
    expect(await stores.sessions.list(alice)).toEqual(sessionsBefore);
    const cs = result.passes[0]!.changeset!;
    expect(cs.status).toBe('proposed');
    expect(result.passes[0]!.result).toBeUndefined();
    const text = formatChangeset(cs);
    expect(text).toContain('(consolidation) for alice, proposed: 1 to create, 1 to update, 2 to delete');
    expect(text).toContain('+ create');
    expect(text).toContain(`merges: ${a!.id}, ${b!.id}`);
    expect(text).toContain(`~ update ${c!.id} (version 1)`);
    expect(text).toContain('category: general → user-preferences/location');
    expect(text).toContain(`- delete ${a!.id} [general]`);
    expect(text).toContain('reason: duplicates');
    expect(text).toContain('model usage: 100 input + 10 output tokens');
  });
});
