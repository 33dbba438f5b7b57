import { describe, expect, it } from 'vitest';
import { KiokuBuilder } from '../../src/index.js';
import { ChangesetLog } from '../../src/memory/changesets/changeset-log.js';
import { ConversationLog } from '../../src/memory/dream/conversation-log.js';
import { dream } from '../../src/memory/dream/dream.js';
import { recordFeedback } from '../../src/memory/feedback/feedback-log.js';
import { isKiokuSession } from '../../src/store/sessions/kioku-sessions.js';
import { answer, callTools, scriptedModel } from '../features/memory-features.harness.js';
import { alice, bob, scriptedJsonModel, seed, world } from './harness.js';

/** Two conversations of alice's, each with a turn, one of them calling a tool. */
async function twoConversations() {
  const { stores, clock } = world();
  const kioku = new KiokuBuilder({ stores, clock, systemPrompt: 'You are helpful.' }).withFacts().build();
  const first = await kioku.startConversation(alice);
  await first.run(
    'Remember that I live in Chicago.',
    scriptedModel([callTools(['create_memory', { content: 'Lives in Chicago' }]), answer('Noted: Chicago.')]),
  );
  clock.advance(1000);
  const second = await kioku.startConversation(alice);
  await second.run('Stop using emoji!', scriptedModel([answer('Understood.')]));
  clock.advance(1000);
  await first.run('And metric units, please.', scriptedModel([answer('Metric it is.')]));
  return { stores, clock, kioku, first, second };
}

describe('the conversation log, derived from the session transcripts since the watermarks', () => {
  it('has the user’s messages and the agent’s replies of every conversation, oldest first, with session, turn and time', async () => {
    const { stores, first, second } = await twoConversations();
    const log = new ConversationLog(stores.sessions);
    const { entries, marks, omitted } = await log.read(alice);
    expect(entries.map((e) => [e.role, e.text, e.sessionId, e.turn])).toEqual([
      ['user', 'Remember that I live in Chicago.', first.sessionId, 0],
      ['assistant', 'Noted: Chicago.', first.sessionId, 0],
      ['user', 'Stop using emoji!', second.sessionId, 0],
      ['assistant', 'Understood.', second.sessionId, 0],
      ['user', 'And metric units, please.', first.sessionId, 1],
      ['assistant', 'Metric it is.', first.sessionId, 1],
    ]);
    // Never the tool call, its result or the system prompt.
    expect(entries.some((e) => e.text.includes('create_memory') || e.text.includes('helpful'))).toBe(false);
    for (const e of entries) expect(Number.isNaN(Date.parse(e.at!))).toBe(false);
    expect(Object.keys(marks).sort()).toEqual([first.sessionId, second.sessionId].sort());
    expect(omitted).toBe(0);
    // Another user's log is empty.
    expect((await log.read(bob)).entries).toEqual([]);
  });

  it('never reads the sessions Kioku keeps for itself', async () => {
    const { stores, clock } = await twoConversations();
    await recordFeedback(stores, alice, { kind: 'negative', text: 'Too long.' });
    await new ChangesetLog(stores.sessions).propose(alice, {
      id: 'cs1',
      pass: 'consolidation',
      userId: 'alice',
      createdAt: new Date(clock.now()).toISOString(),
      operations: [],
      status: 'proposed',
    });
    // Even one with a transcript (whatever wrote it there).
    const own = await stores.sessions.create(alice, { metadata: { kioku: 'something-new' } });
    await stores.sessions.transcriptAppend(alice, own.id, { role: 'user', content: 'internal' });
    const log = new ConversationLog(stores.sessions);
    const { entries, marks } = await log.read(alice);
    await log.clear(alice, { marks });
    const sessions = await stores.sessions.list(alice);
    expect(
      sessions
        .filter(isKiokuSession)
        .map((s) => s.metadata.kioku)
        .sort(),
    ).toEqual(['changesets', 'conversation-log', 'feedback', 'something-new'].sort());
    expect(sessions.filter((s) => !isKiokuSession(s))).toHaveLength(2);
    expect(entries.some((e) => e.text === 'internal')).toBe(false);
    expect(Object.keys(marks)).not.toContain(own.id);
  });

  it('is bounded: the newest entries are kept, long messages cut', async () => {
    const { stores, clock } = world();
    const s = await stores.sessions.create(alice);
    for (let i = 0; i < 6; i++) {
      await stores.sessions.transcriptAppend(alice, s.id, { role: 'user', content: `message ${i}` });
      clock.advance(1);
    }
    await stores.sessions.transcriptAppend(alice, s.id, { role: 'user', content: 'x'.repeat(50) });
    const read = await new ConversationLog(stores.sessions, { maxEntries: 3, maxEntryChars: 10 }).read(alice);
    expect(read.entries.map((e) => e.text)).toEqual(['message 4', 'message 5', `${'x'.repeat(9)}…`]);
    expect(read.omitted).toBe(4);

    const model = scriptedJsonModel([{ preferences: [] }]);
    const result = await dream({
      stores,
      model,
      scope: alice,
      clock,
      consolidation: { enabled: false },
      conversationLog: new ConversationLog(stores.sessions, { maxEntries: 3 }),
    });
    expect(result.logOmitted).toBe(4);
    expect(result.passes[0]!.changeset!.notes).toEqual(['Only the newest 3 of 7 log messages were read.']);
    expect(model.prompts[0]![1]!.content).toContain('Conversation log (3 messages)');
  });

  it('clearing advances the watermarks: only what came after is read next, even within the same millisecond', async () => {
    const { stores, first } = await twoConversations();
    const log = new ConversationLog(stores.sessions);
    const read = await log.read(alice);
    // Written after the read, in the same millisecond as the last entry read (the clock did not move).
    await stores.sessions.transcriptAppend(alice, first.sessionId, {
      role: 'user',
      content: 'One more thing.',
    });
    await log.clear(alice, read);
    expect((await log.read(alice)).entries.map((e) => e.text)).toEqual(['One more thing.']);
    // A new log instance (another process) sees the same watermarks.
    const again = new ConversationLog(stores.sessions);
    const next = await again.read(alice);
    expect(next.entries.map((e) => e.text)).toEqual(['One more thing.']);
    await again.clear(alice, next);
    expect((await log.read(alice)).entries).toEqual([]);
    // A stale clear never moves a watermark back.
    await log.clear(alice, read);
    expect((await log.read(alice)).entries).toEqual([]);
  });

  it('two instances clearing at once both advance the watermarks', async () => {
    const { stores, first, second } = await twoConversations();
    const read = await new ConversationLog(stores.sessions).read(alice);
    const only = (id: string) => ({ marks: { [id]: read.marks[id]! } });
    // Two app instances, each clearing what it read of one conversation.
    await Promise.all([
      new ConversationLog(stores.sessions).clear(alice, only(first.sessionId)),
      new ConversationLog(stores.sessions).clear(alice, only(second.sessionId)),
    ]);
    expect(await new ConversationLog(stores.sessions).watermarks(alice)).toEqual(read.marks);
    expect((await new ConversationLog(stores.sessions).read(alice)).entries).toEqual([]);
  });

  it('drops the watermark of a deleted session', async () => {
    const { stores, first, second } = await twoConversations();
    const log = new ConversationLog(stores.sessions);
    await log.clear(alice, await log.read(alice));
    expect(Object.keys(await log.watermarks(alice))).toContain(second.sessionId);
    await stores.sessions.delete(alice, second.sessionId);
    await stores.sessions.transcriptAppend(alice, first.sessionId, { role: 'user', content: 'Hi' });
    await log.clear(alice, await log.read(alice));
    expect(Object.keys(await log.watermarks(alice))).toEqual([first.sessionId]);
    expect(Object.keys(await log.watermarks(alice))).not.toContain(second.sessionId);
  });
});

describe('the dream reads the log and clears it', () => {
  it('reads the log itself, shows it to the preference pass, and clears it after', async () => {
    const { stores, clock, kioku } = await twoConversations();
    const model = scriptedJsonModel([
      { preferences: [{ content: 'No emoji', sentiment: 'very_irritated', occurrences: 1 }] },
    ]);
    const result = await kioku.passes.dream({ scope: alice, model, consolidation: { enabled: false } });
    expect(result.passes[0]!.changeset!.operations).toHaveLength(1);
    const prompt = model.prompts[0]![1]!.content;
    expect(prompt).toContain('user: Stop using emoji!');
    expect(prompt).toContain('assistant: Understood.');
    expect(prompt).not.toContain('create_memory');
    expect((await new ConversationLog(stores.sessions).read(alice)).entries).toEqual([]);
    // The next dream has nothing new to read: its preference pass asks the model nothing.
    const idle = scriptedJsonModel([]);
    await dream({ stores, model: idle, scope: alice, clock, consolidation: { enabled: false } });
    expect(idle.prompts).toEqual([]);
  });

  it('clears it when the model fails, and when consolidation threw; never on a dry run', async () => {
    const { stores, clock } = await twoConversations();
    const log = new ConversationLog(stores.sessions);
    const before = (await log.read(alice)).entries.length;
    expect(before).toBe(6);

    await dream({
      stores,
      model: scriptedJsonModel([{ preferences: [] }]),
      scope: alice,
      clock,
      dryRun: true,
      consolidation: { enabled: false },
    });
    expect((await log.read(alice)).entries).toHaveLength(6);

    const failing = await dream({
      stores,
      model: scriptedJsonModel(['not json', 'still not json']),
      scope: alice,
      clock,
      consolidation: { enabled: false },
    });
    expect(failing.passes[0]!.error!.code).toBe('MODEL_OUTPUT');
    expect((await log.read(alice)).entries).toEqual([]);

    const { stores: s2, clock: c2 } = await twoConversations();
    await seed(s2, c2, alice, ['A fact']);
    const crashing = {
      async complete(): Promise<never> {
        throw new Error('connection reset');
      },
    };
    await expect(dream({ stores: s2, model: crashing, scope: alice, clock: c2 })).rejects.toThrow(
      'connection reset',
    );
    expect((await new ConversationLog(s2.sessions).read(alice)).entries).toEqual([]);
  });

  it('keeps the log when the preference pass is turned off', async () => {
    const { stores, clock } = await twoConversations();
    await dream({
      stores,
      model: scriptedJsonModel([]),
      scope: alice,
      clock,
      preferences: { enabled: false },
    });
    expect((await new ConversationLog(stores.sessions).read(alice)).entries).toHaveLength(6);
  });
});
