import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/index.js';
import { ChangesetLog } from '../../src/memory/changesets/changeset-log.js';
import { extractBatch } from '../../src/memory/extraction/batch.js';
import { extractSession } from '../../src/memory/extraction/extract-session.js';
import { SuppressionList } from '../../src/memory/trust/suppression.js';
import { alice, bob, contentOf, scriptedJsonModel, seed, world } from './harness.js';

const said = (prompt: readonly ChatMessage[]) => prompt.map((m) => m.content).join('\n');

const exchanges = [
  { turn: 3, exchange: { user: 'I started learning the cello last week.', answer: 'Lovely!' } },
  { turn: 4, exchange: { user: 'My sister Ana lives in Porto.', answer: 'Porto is beautiful.' } },
  {
    turn: 5,
    exchange: {
      user: 'Can you tell me about the vault?',
      answer: 'Your staging vault passphrase is heron-7731.',
    },
  },
];

describe('extractBatch', () => {
  it('reads every exchange in one call, and each fact names the turn it came from', async () => {
    const { stores, clock } = world();
    const model = scriptedJsonModel([
      {
        facts: [
          { turn: 3, content: 'User started learning the cello', category: 'personal/hobbies' },
          { turn: 4, content: "User's sister Ana lives in Porto", category: 'personal/family' },
        ],
      },
    ]);
    const result = await extractBatch({
      stores,
      model,
      scope: alice,
      sessionId: 's1',
      exchanges,
      clock,
    });
    expect(model.prompts).toHaveLength(1);
    const prompt = said(model.prompts[0]!);
    expect(prompt).toContain('<exchange turn="3">');
    expect(prompt).toContain('My sister Ana lives in Porto.');
    const facts = await contentOf(stores, alice);
    expect(facts.map((f) => [f.content, f.provenance.sessionId, f.provenance.turn])).toEqual([
      ['User started learning the cello', 's1', 3],
      ["User's sister Ana lives in Porto", 's1', 4],
    ]);
    // One changeset for the batch, kept: it reverts as one.
    const kept = await new ChangesetLog(stores.sessions).list(alice);
    expect(kept.map((k) => k.changeset.id)).toEqual([result.changeset.id]);
  });

  it("drops a fact only the assistant's answer says, a fact of a turn not in the batch, and what the user forgot", async () => {
    const { stores, clock } = world();
    await new SuppressionList(stores.sessions).add(
      alice.userId,
      ['User started learning the cello'],
      '2026-01-01T00:00:00.000Z',
    );
    const model = scriptedJsonModel([
      {
        facts: [
          { turn: 3, content: 'User started learning the cello' },
          { turn: 5, content: "User's staging vault passphrase is heron-7731" },
          { turn: 9, content: "User's sister Ana lives in Porto" },
          { turn: 4, content: "User's sister Ana lives in Porto" },
        ],
      },
    ]);
    const result = await extractBatch({ stores, model, scope: alice, sessionId: 's1', exchanges, clock });
    expect((await contentOf(stores, alice)).map((f) => [f.content, f.provenance.turn])).toEqual([
      ["User's sister Ana lives in Porto", 4],
    ]);
    const notes = result.changeset.notes?.join('\n') ?? '';
    expect(notes).toMatch(/Not said by the user \(7731 only in the assistant's answer\)/);
    expect(notes).toMatch(/names turn 9, which is not in the batch/);
    expect(notes).toMatch(/1 proposed fact\(s\) the user had forgotten were not stored again/);
  });

  it("shows the user's similar facts with ids and applies the call's UPDATE and DELETE of them", async () => {
    const { stores, clock } = world();
    const [cello, berlin, other] = await seed(stores, clock, alice, [
      { content: 'User plays the cello', category: 'personal/hobbies' },
      { content: 'User lives in Berlin', category: 'personal/home' },
      { content: 'User likes green tea', category: 'user-preferences/drinks' },
    ]);
    await seed(stores, clock, bob, [{ content: 'User lives in Berlin too' }]);
    const model = scriptedJsonModel([
      (messages: ChatMessage[]) => {
        const prompt = said(messages);
        const shownIds = [...prompt.matchAll(/- \[([^\]]+)\]/g)].map((m) => m[1]);
        expect(shownIds).toEqual(expect.arrayContaining([cello!.id, berlin!.id]));
        return {
          facts: [
            {
              turn: 0,
              content: 'User plays the cello in a quartet',
              event: 'UPDATE',
              id: cello!.id,
              reason: 'Adds the quartet.',
            },
            {
              turn: 1,
              content: 'User moved away from Berlin to Lisbon',
              event: 'DELETE',
              id: berlin!.id,
              reason: 'Moved.',
            },
            { turn: 1, content: 'User lives in Lisbon', event: 'ADD' },
            // An id the call was not shown (another fact of the user's): ignored, never written.
            { turn: 1, content: 'User moved to Lisbon', event: 'DELETE', id: 'not-shown-id' },
          ],
        };
      },
    ]);
    const result = await extractBatch({
      stores,
      model,
      scope: alice,
      sessionId: 's2',
      exchanges: [
        { turn: 0, exchange: { user: 'I play the cello in a quartet now.' } },
        { turn: 1, exchange: { user: 'I moved away from Berlin; I live in Lisbon now.' } },
      ],
      clock,
    });
    expect(model.prompts).toHaveLength(1);
    const facts = await contentOf(stores, alice);
    expect(facts.map((f) => f.content).sort()).toEqual(
      ['User likes green tea', 'User lives in Lisbon', 'User plays the cello in a quartet'].sort(),
    );
    expect(facts.find((f) => f.id === cello!.id)?.provenance).toMatchObject({ sessionId: 's2', turn: 0 });
    expect(facts.some((f) => f.id === other!.id)).toBe(true);
    expect(result.changeset.notes?.join('\n')).toMatch(
      /Ignored ids that are not among the memories shown: not-shown-id/,
    );
    expect(await stores.facts.list(bob)).toHaveLength(1);
  });

  it('an UPDATE restating the memory it extends is grounded by it; one that drops what it said, without outdated, is added instead', async () => {
    const { stores, clock } = world();
    const [cello, tea] = await seed(stores, clock, alice, [
      { content: 'User plays the cello in a quartet on Sundays', category: 'personal/hobbies' },
      { content: 'User drinks green tea every morning', category: 'user-preferences/drinks' },
    ]);
    const model = scriptedJsonModel([
      {
        facts: [
          // Most of its words come from the memory, not the user's message: the memory counts as said.
          {
            turn: 0,
            content: 'User plays the cello in a quartet on Sundays, now also in an orchestra',
            event: 'UPDATE',
            id: cello!.id,
          },
          // Drops "green tea every morning" without calling it outdated: stored as a new fact.
          { turn: 1, content: 'User drinks coffee', event: 'UPDATE', id: tea!.id },
        ],
      },
    ]);
    const result = await extractBatch({
      stores,
      model,
      scope: alice,
      sessionId: 's5',
      exchanges: [
        { turn: 0, exchange: { user: 'I joined an orchestra too.' } },
        { turn: 1, exchange: { user: 'These days I drink coffee.' } },
      ],
      clock,
    });
    const facts = await contentOf(stores, alice);
    expect(facts.find((f) => f.id === cello!.id)?.content).toBe(
      'User plays the cello in a quartet on Sundays, now also in an orchestra',
    );
    expect(facts.find((f) => f.id === tea!.id)?.content).toBe('User drinks green tea every morning');
    expect(facts.map((f) => f.content)).toContain('User drinks coffee');
    expect(result.changeset.notes?.join('\n')).toContain(`The update of ${tea!.id} would drop what it says`);
  });

  it("ignores an UPDATE naming a fact that is the user's but was not shown", async () => {
    const { stores, clock } = world();
    const [hidden] = await seed(stores, clock, alice, [{ content: 'User is vegetarian' }]);
    const model = scriptedJsonModel([
      {
        facts: [{ turn: 0, content: 'User owns a red bicycle', event: 'UPDATE', id: hidden!.id }],
      },
    ]);
    const result = await extractBatch({
      stores,
      model,
      scope: alice,
      sessionId: 's3',
      exchanges: [{ turn: 0, exchange: { user: 'I own a red bicycle.' } }],
      clock,
    });
    expect(said(model.prompts[0]!)).not.toContain(hidden!.id);
    expect((await contentOf(stores, alice)).map((f) => f.content)).toEqual(['User is vegetarian']);
    expect(result.changeset.notes?.join('\n')).toContain(
      `Ignored ids that are not among the memories shown: ${hidden!.id}`,
    );
  });

  it('reconciles in a second call only the new facts like the similar facts that did not fit the budget', async () => {
    const { stores, clock } = world();
    const [tea] = await seed(stores, clock, alice, [
      { content: 'User likes green tea in the morning', category: 'user-preferences/drinks' },
    ]);
    const model = scriptedJsonModel([
      (messages: ChatMessage[]) => {
        expect(said(messages)).not.toContain(tea!.id);
        return { facts: [{ turn: 0, content: 'User likes green tea with jasmine' }] };
      },
      (messages: ChatMessage[]) => {
        expect(said(messages)).toContain(tea!.id);
        return {
          decisions: [
            {
              fact: 1,
              event: 'UPDATE',
              id: tea!.id,
              content: 'User likes green tea with jasmine in the morning',
            },
          ],
        };
      },
    ]);
    await extractBatch({
      stores,
      model,
      scope: alice,
      sessionId: 's4',
      exchanges: [{ turn: 0, exchange: { user: 'I like green tea with jasmine.' } }],
      similarTokens: 1,
      clock,
    });
    expect(model.prompts).toHaveLength(2);
    expect((await contentOf(stores, alice)).map((f) => [f.id, f.content, f.provenance.turn])).toEqual([
      [tea!.id, 'User likes green tea with jasmine in the morning', 0],
    ]);
  });
});

describe('extractSession in batches', () => {
  it('reads a stored session in calls of `batch` turns, each fact naming its turn', async () => {
    const { stores, clock } = world();
    const session = await stores.sessions.create(alice);
    const lines = ['I live in Lisbon.', 'I have a cat named Miso.', 'I work as a nurse.'];
    await stores.sessions.transcriptAppend(
      alice,
      session.id,
      lines.flatMap((content) => [
        { role: 'user' as const, content },
        { role: 'assistant' as const, content: 'Noted.' },
      ]),
    );
    const model = scriptedJsonModel([
      {
        facts: [
          { turn: 0, content: 'User lives in Lisbon' },
          { turn: 1, content: 'User has a cat named Miso' },
        ],
      },
      { facts: [{ turn: 2, content: 'User works as a nurse' }] },
    ]);
    const results = await extractSession({
      stores,
      model,
      scope: alice,
      sessionId: session.id,
      batch: 2,
      clock,
    });
    expect(model.prompts).toHaveLength(2);
    expect(results).toHaveLength(2);
    expect((await contentOf(stores, alice)).map((f) => [f.content, f.provenance.turn])).toEqual([
      ['User lives in Lisbon', 0],
      ['User has a cat named Miso', 1],
      ['User works as a nurse', 2],
    ]);
  });
});
