import { describe, expect, it } from 'vitest';
import {
  type ChatMessage,
  conversationHistory,
  type IntentClassifier,
  KiokuBuilder,
  type MiddlewareContext,
  type RecallMode,
} from '../../src/index.js';
import { factRecall } from '../../src/memory/facts/recall/feature.js';
import { relevantMemory } from '../../src/memory/facts/relevant/feature.js';
import { MEMORY_NOTICE } from '../../src/memory/trust/fence.js';
import { InMemoryFactStore } from '../../src/store/facts/memory.js';
import { InMemorySessionStore } from '../../src/store/sessions/memory.js';
import { bundleWith } from '../bundle.js';
import { answer, callTools, expectLedgerAddsUp, scriptedModel } from '../features/memory-features.harness.js';

const alice = { userId: 'alice' };

/** Fact recall over facts that count their searches, with conversation replay when asked. */
async function setup(options: { recall?: RecallMode; intent?: IntentClassifier; history?: boolean } = {}) {
  const facts = new InMemoryFactStore();
  const sessions = new InMemorySessionStore();
  let searches = 0;
  const counted = Object.create(facts) as InMemoryFactStore;
  counted.search = (...args: Parameters<InMemoryFactStore['search']>) => {
    searches++;
    return facts.search(...args);
  };
  await facts.create(alice, { content: 'The AgentFusion database is Postgres on db.internal:5432.' });
  await facts.create(alice, { content: 'User prefers the staging DB for experiments.' });
  const builder = new KiokuBuilder({
    stores: bundleWith({ sessions, facts: counted }),
    systemPrompt: 'You are helpful.',
    ...(options.recall ? { recall: options.recall } : {}),
    ...(options.intent ? { intent: options.intent } : {}),
  }).use(factRecall({ store: counted, sessions, fallbackResults: 0 }));
  if (options.history) builder.use(conversationHistory({ sessions }));
  return { kioku: builder.build(), searches: () => searches };
}

describe("recall: 'auto' — the intent step before recall", () => {
  it('skips recall for a concrete message: no search, 0 tokens, and the ledger says why', async () => {
    const { kioku, searches } = await setup({ recall: 'auto' });
    const convo = await kioku.startConversation(alice);
    const turn = await convo.prepare('Translate "good night" into French.');
    expect(turn.ledger.recall).toMatchObject({
      recall: false,
      mode: 'auto',
      by: 'deterministic',
      intent: 'concrete',
    });
    expect(turn.ledger.recall.reason).toMatch(/^Concrete: /);
    expect(searches()).toBe(0);
    const entry = turn.ledger.entries.find((e) => e.middleware === 'fact-recall')!;
    expect(entry).toMatchObject({
      tokens: 0,
      included: 0,
      dropped: [{ id: 'recall', reason: 'not-needed' }],
    });
    expect(entry.notes).toEqual([`skipped: ${turn.ledger.recall.reason}`]);
    expect(turn.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expectLedgerAddsUp(turn, 16_000);
  });

  it('runs recall for an ambiguous message and names what it could not resolve', async () => {
    const { kioku, searches } = await setup({ recall: 'auto' });
    const convo = await kioku.startConversation(alice);
    const turn = await convo.prepare('Connect to the DB');
    expect(turn.ledger.recall).toMatchObject({ recall: true, intent: 'ambiguous', by: 'deterministic' });
    expect(turn.ledger.recall.cues).toEqual(['"the db" is not in the context']);
    expect(searches()).toBe(1);
    expect(turn.messages[1]?.content).toContain('staging DB');
  });

  it('reads the message against the replayed turns: discussed before, it is concrete', async () => {
    const { kioku } = await setup({ recall: 'auto', history: true });
    const convo = await kioku.startConversation(alice);
    await convo.record([
      { role: 'user', content: 'We will work on the AgentFusion database today (Postgres, db.internal).' },
      { role: 'assistant', content: 'Understood: AgentFusion database on db.internal.' },
    ]);
    const turn = await convo.prepare('Connect to the AgentFusion database');
    expect(turn.ledger.recall).toMatchObject({ recall: false, intent: 'concrete' });
    // Without replay the model would not see that talk, so the same message needs memory.
    const { kioku: noReplay } = await setup({ recall: 'auto' });
    const other = await noReplay.startConversation(alice);
    await other.record([{ role: 'user', content: 'We will work on the AgentFusion database today.' }]);
    expect((await other.prepare('Connect to the AgentFusion database')).ledger.recall.recall).toBe(true);
  });

  it('skips relevant memory too, and leaves middlewares that are not recall alone', async () => {
    const facts = new InMemoryFactStore();
    await facts.create(alice, { content: 'Likes green tea' });
    const seen: MiddlewareContext[] = [];
    const kioku = new KiokuBuilder({ stores: bundleWith({ facts }), recall: 'auto' })
      .use({
        name: 'block',
        middleware: {
          name: 'block',
          placement: 'system',
          async inject() {
            return { messages: [{ role: 'system', content: 'A block.' }], included: 1, dropped: [] };
          },
        },
      })
      .use(relevantMemory({ facts, autoStore: false, relevanceThreshold: 0 }))
      .use({
        name: 'spy',
        middleware: {
          name: 'spy',
          placement: 'system',
          async inject(ctx) {
            seen.push(ctx);
            return { messages: [], included: 0, dropped: [] };
          },
        },
      })
      .build();
    const convo = await kioku.startConversation(alice);
    const turn = await convo.prepare('Write a haiku about green tea.');
    expect(turn.ledger.entries.map((e) => [e.middleware, e.tokens > 0, e.dropped[0]?.reason])).toEqual([
      ['block', true, undefined],
      ['relevant-memory', false, 'not-needed'],
      ['spy', false, undefined],
    ]);
    // One decision, handed to every middleware with what the earlier ones injected.
    expect(seen[0]!.recall).toBe(turn.ledger.recall);
    expect(seen[0]!.injected).toEqual([{ role: 'system', content: 'A block.' }]);
  });

  it("forces recall with 'always' (per conversation or per turn) and turns it off with 'never'", async () => {
    const { kioku, searches } = await setup({ recall: 'auto' });
    const convo = await kioku.startConversation(alice);
    const forced = await convo.prepare('Translate "good night" into French.', { recall: 'always' });
    expect(forced.ledger.recall).toEqual({
      recall: true,
      mode: 'always',
      by: 'setting',
      reason: "Recall runs on every turn (recall: 'always').",
    });
    expect(searches()).toBe(1);
    const off = await convo.prepare('Connect to the DB', { recall: 'never' });
    expect(off.ledger.recall).toMatchObject({ recall: false, mode: 'never', by: 'setting' });
    expect(searches()).toBe(1);
    const { kioku: byDefault } = await setup();
    const turn = await (await byDefault.startConversation(alice)).prepare('Translate "hi" into French.');
    expect(turn.ledger.recall).toMatchObject({ recall: true, mode: 'always' });
    await expect(convo.prepare('Hi', { recall: 'sometimes' as RecallMode })).rejects.toMatchObject({
      code: 'VALIDATION',
    });
  });

  it('notes in the turn result when the model asked memory itself after recall was skipped', async () => {
    const { kioku } = await setup({ recall: 'auto' });
    const convo = await kioku.startConversation(alice);
    const model = scriptedModel([callTools(['search_memory', { query: 'database' }]), answer('Done.')]);
    const result = await convo.run('Write a haiku about databases.', model);
    expect(result.ledger.recall).toMatchObject({ recall: false, forcedBy: { tool: 'search_memory' } });
    // The tool did recall: its result holds the fact.
    expect(result.messages.find((m) => m.role === 'tool')?.content).toContain('AgentFusion');
    const plain = await convo.run('Write a haiku about tea.', scriptedModel([answer('Tea.')]));
    expect(plain.ledger.recall.forcedBy).toBeUndefined();
  });

  it('keeps recall on when a custom classifier throws, and reports it', async () => {
    const broken: IntentClassifier = {
      name: 'custom',
      async classify() {
        throw new Error('classifier down');
      },
    };
    const { kioku, searches } = await setup({ recall: 'auto', intent: broken });
    const turn = await (await kioku.startConversation(alice)).prepare('Translate "hi" into French.');
    expect(turn.ledger.recall).toMatchObject({
      recall: true,
      by: 'setting',
      fallback: { from: 'custom', code: 'CLASSIFIER_FAILED', message: 'classifier down' },
    });
    expect(searches()).toBe(1);
  });

  it('makes no decision (and no model call) when no recall middleware is registered', async () => {
    let calls = 0;
    const counting: IntentClassifier = {
      name: 'counting',
      async classify() {
        calls++;
        return { intent: 'ambiguous', reason: 'x', cues: [], by: 'counting' };
      },
    };
    const kioku = new KiokuBuilder({ stores: bundleWith({}), recall: 'auto', intent: counting })
      .withFacts()
      .build();
    const turn = await (await kioku.startConversation(alice)).prepare('Connect to the DB');
    expect(turn.ledger.recall).toMatchObject({ recall: false, by: 'setting' });
    expect(calls).toBe(0);
  });

  it('hands the classifier the system prompt and the replayed turns as context', async () => {
    const inputs: ChatMessage[][] = [];
    const spy: IntentClassifier = {
      name: 'spy',
      async classify(input) {
        inputs.push([...input.context]);
        return { intent: 'concrete', reason: 'ok', cues: [], by: 'spy' };
      },
    };
    const { kioku } = await setup({ recall: 'auto', intent: spy, history: true });
    const convo = await kioku.startConversation(alice);
    await convo.record([
      { role: 'user', content: 'Hello' },
      { role: 'assistant', content: 'Hi!' },
    ]);
    await convo.prepare('Go on');
    expect(inputs[0]).toEqual([
      { role: 'system', content: `You are helpful.\n\n${MEMORY_NOTICE}` },
      { role: 'user', content: 'Hello' },
      { role: 'assistant', content: 'Hi!' },
    ]);
  });
});
