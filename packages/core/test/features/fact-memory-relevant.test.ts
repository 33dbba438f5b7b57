import { describe, expect, it } from 'vitest';
import {
  type ChatMessage,
  type ChatModel,
  defaultTokenizer,
  KiokuBuilder,
  type TurnLedger,
} from '../../src/index.js';
import { relevantMemory } from '../../src/memory/facts/relevant/feature.js';
import { MEMORIES_END, MEMORIES_HEADER } from '../../src/memory/facts/relevant/format.js';
import type { RelevantMemoryOptions } from '../../src/memory/facts/relevant/manager.js';
import { RelevantMemory } from '../../src/memory/facts/relevant/manager.js';
import { MEMORY_NOTICE, quoteContent } from '../../src/memory/trust/fence.js';
import { countMessagesTokens } from '../../src/model/messages.js';
import { InMemoryDetailStore } from '../../src/store/details/memory.js';
import { InMemoryFactStore } from '../../src/store/facts/memory.js';
import { InMemorySessionStore } from '../../src/store/sessions/memory.js';
import { ManualClock } from '../../src/testing.js';
import { bundleWith } from '../bundle.js';

const tok = defaultTokenizer;
const alice = { userId: 'alice' };

function scriptedModel(replies: ChatMessage[]): ChatModel & { prompts: ChatMessage[][] } {
  const prompts: ChatMessage[][] = [];
  return {
    prompts,
    async complete({ messages }) {
      prompts.push([...messages]);
      const reply = replies.shift();
      if (!reply) throw new Error('model script exhausted');
      return reply;
    },
  };
}

function expectLedgerAddsUp(ledger: TurnLedger, messages: ChatMessage[]) {
  expect(ledger.totalTokens).toBe(countMessagesTokens(tok, messages) + ledger.tools.tokens);
  expect(ledger.totalTokens).toBe(
    ledger.baseTokens + ledger.tools.tokens + ledger.entries.reduce((s, e) => s + e.tokens, 0),
  );
  expect(ledger.totalTokens).toBeLessThanOrEqual(ledger.maxTokens);
}

async function seededFacts() {
  const clock = new ManualClock();
  const facts = new InMemoryFactStore({ clock });
  const ids: Record<string, string> = {};
  const add = async (key: string, content: string, category: string) => {
    ids[key] = (await facts.create(alice, { content, category })).id;
    clock.advance(1000);
  };
  await add('postgres', 'User prefers Postgres for new projects', 'user-preferences/database');
  await add('editor', 'User: which editor do you recommend?\nAssistant: Try Helix.', 'episodic/interactions');
  await add('hiking', 'User likes hiking on weekends', 'general');
  await add('migrations', 'Always run database migrations inside a transaction', 'procedural/database');
  return { clock, facts, ids };
}

describe('RelevantMemory (standalone)', () => {
  it('has the documented defaults', async () => {
    const manager = new RelevantMemory({ facts: new InMemoryFactStore() });
    expect(manager).toMatchObject({
      autoRetrieve: true,
      autoStore: true,
      relevanceThreshold: 0.7,
      maxMemories: 5,
      interactionCategory: 'episodic/interactions',
    });
  });

  it('stores an interaction as an episodic fact with provenance', async () => {
    const clock = new ManualClock(Date.UTC(2025, 2, 3));
    const facts = new InMemoryFactStore({ clock });
    const manager = new RelevantMemory({ facts });
    const fact = await manager.storeInteraction({ userId: 'alice', threadId: 'session-1' }, 'Hello', {
      content: 'Hi there!',
    });
    const [stored, ...rest] = await facts.list(alice);
    expect(rest).toEqual([]);
    expect(stored).toEqual(fact);
    expect(stored).toMatchObject({
      content: 'User: Hello\nAssistant: Hi there!',
      category: 'episodic/interactions',
      tags: ['interaction'],
      provenance: { source: 'assistant', sessionId: 'session-1' },
      createdAt: '2025-03-03T00:00:00.000Z',
    });
  });

  it('refuses an empty exchange and writes nothing', async () => {
    const facts = new InMemoryFactStore();
    const manager = new RelevantMemory({ facts });
    await expect(manager.storeInteraction(alice, 'Hello', '   ')).rejects.toMatchObject({
      code: 'VALIDATION',
    });
    expect(await facts.list(alice)).toEqual([]);
  });

  it('retrieves the relevant memories with a normalized relevance, best first', async () => {
    const { facts, ids } = await seededFacts();
    const manager = new RelevantMemory({ facts });
    const results = await manager.retrieveContext(alice, 'Which database should new projects use?');
    expect(results[0]).toMatchObject({ id: ids.postgres, source: 'fact', type: 'semantic' });
    expect(results.map((r) => r.id)).not.toContain(ids.hiking);
    for (const r of results) {
      expect(r.relevance).toBeGreaterThanOrEqual(0.7);
      expect(r.relevance).toBeLessThanOrEqual(1);
    }
    expect(results.map((r) => r.relevance)).toEqual(
      [...results.map((r) => r.relevance)].sort((a, b) => b - a),
    );
    const exact = await manager.retrieveContext(alice, 'hiking weekends');
    expect(exact).toEqual([expect.objectContaining({ id: ids.hiking, relevance: 1 })]);
  });

  it('does not pass the best hit of a poor match: relevance has an absolute part', async () => {
    const { facts, ids } = await seededFacts();
    const manager = new RelevantMemory({ facts });
    // One of five query terms ("hiking"): best hit, but relevance (1 + 1/5) / 2 = 0.6.
    const query = 'hiking boots for winter mountains trip';
    expect(await manager.retrieveContext(alice, query)).toEqual([]);
    const ranked = await manager.rank(alice, query);
    expect(ranked.belowThreshold[0]).toMatchObject({ id: ids.hiking });
    expect(ranked.belowThreshold[0]!.relevance).toBeCloseTo(0.6, 10);
    expect(await manager.retrieveContext(alice, query, { threshold: 0.6 })).toEqual([
      expect.objectContaining({ id: ids.hiking }),
    ]);
  });

  it('filters by memory type and caps the number of memories', async () => {
    const { facts, ids } = await seededFacts();
    const manager = new RelevantMemory({ facts });
    const query = 'database migrations transaction';
    expect((await manager.retrieveContext(alice, query, { types: ['procedural'] })).map((r) => r.id)).toEqual(
      [ids.migrations],
    );
    expect(await manager.retrieveContext(alice, query, { types: ['episodic'] })).toEqual([]);
    const editor = await manager.retrieveContext(alice, 'editor recommend', { types: ['episodic'] });
    expect(editor).toEqual([expect.objectContaining({ id: ids.editor, type: 'episodic' })]);
    const loose = await manager.retrieveContext(alice, 'database new projects', { threshold: 0 });
    expect(loose.length).toBeGreaterThan(1);
    const capped = await manager.retrieveContext(alice, 'database new projects', { threshold: 0, max: 1 });
    expect(capped).toEqual([loose[0]]);
    const ranked = await manager.rank(alice, 'database new projects', { threshold: 0, max: 1 });
    expect(ranked.overLimit.map((r) => r.id)).toEqual(loose.slice(1).map((r) => r.id));
  });

  it('searches offloaded details too, returning their MemoryRef rather than their content', async () => {
    const facts = new InMemoryFactStore();
    const details = new InMemoryDetailStore();
    const detail = await details.create(
      { userId: 'alice', threadId: 't1' },
      {
        description: 'psql output (cmd: \\dt)',
        summary: 'Lists 42 database tables',
        content: `List of relations\n${Array.from({ length: 42 }, (_, i) => `public | table_${i} | table | app`).join('\n')}`,
      },
    );
    const manager = new RelevantMemory({ facts, details });
    const results = await manager.retrieveContext(alice, 'database tables list');
    expect(results).toEqual([
      expect.objectContaining({
        id: detail.id,
        source: 'detail',
        type: 'tool_output',
        content: `[MemoryRef: ${detail.id} - psql output (cmd: \\dt) - ${detail.tokenCount} tokens] Summary: Lists 42 database tables`,
      }),
    ]);
    expect(await manager.retrieveContext(alice, 'database tables list', { types: ['semantic'] })).toEqual([]);
    expect(
      await manager.retrieveContext(alice, 'database tables list', { types: ['tool_output'] }),
    ).toHaveLength(1);
  });

  it('never returns another user’s memories', async () => {
    const { facts } = await seededFacts();
    const manager = new RelevantMemory({ facts, details: new InMemoryDetailStore() });
    expect(await manager.retrieveContext({ userId: 'bob' }, 'hiking weekends')).toEqual([]);
    expect(await manager.retrieveContext({ userId: 'alice', agentId: 'other' }, 'hiking weekends')).toEqual(
      [],
    );
  });

  it('returns nothing for a query without search terms, and validates its options', async () => {
    const { facts } = await seededFacts();
    const manager = new RelevantMemory({ facts });
    expect(await manager.retrieveContext(alice, 'what is it that they are?')).toEqual([]);
    await expect(manager.retrieveContext(alice, 'hiking', { threshold: 2 })).rejects.toMatchObject({
      code: 'VALIDATION',
    });
    expect(() => new RelevantMemory({ facts, maxMemories: 0 })).toThrow(/maxMemories/);
    expect(() => new RelevantMemory({ facts, interactionCategory: '../x' })).toThrow(/interactionCategory/);
  });
});

describe('relevantMemory feature', () => {
  function setup(
    options: Partial<RelevantMemoryOptions> = {},
    budget?: { maxTokens: number; share?: number },
  ) {
    const facts = new InMemoryFactStore();
    const sessions = new InMemorySessionStore();
    const manager = new RelevantMemory({ facts, ...options });
    const kioku = new KiokuBuilder({
      stores: bundleWith({ sessions }),
      systemPrompt: 'You are helpful.',
      budget: {
        maxTokens: budget?.maxTokens ?? 16_000,
        ...(budget?.share ? { shares: { 'relevant-memory': budget.share } } : {}),
      },
    })
      .use(relevantMemory(manager))
      .build();
    return { facts, manager, kioku };
  }

  it('stores the exchange after the turn and recalls it in another session', async () => {
    const { facts, kioku } = setup();
    const first = await kioku.startConversation({ userId: 'alice' });
    await first.run(
      'What database do we use for new projects?',
      scriptedModel([
        {
          role: 'assistant',
          content: 'Let me check.',
          toolCalls: [{ id: 'c1', name: 'nope', arguments: '{}' }],
        },
        { role: 'assistant', content: 'We use Postgres for new projects.' },
      ]),
    );
    const [stored] = await facts.list(alice);
    expect(stored).toMatchObject({
      content:
        'User: What database do we use for new projects?\nAssistant: We use Postgres for new projects.',
      category: 'episodic/interactions',
      metadata: { turnIndex: 0 },
      provenance: { source: 'assistant', sessionId: first.sessionId },
    });

    const second = await kioku.startConversation({ userId: 'alice' });
    const model = scriptedModel([{ role: 'assistant', content: 'Postgres.' }]);
    const turn = await second.run('Which database for new projects again?', model);
    const prompt = model.prompts[0]!;
    expect(prompt).toEqual([
      { role: 'system', content: `You are helpful.\n\n${MEMORY_NOTICE}` },
      {
        role: 'system',
        content: `${MEMORIES_HEADER}\n1. [episodic, assistant] ${quoteContent(stored!.content)}\n${MEMORIES_END}`,
      },
      { role: 'user', content: 'Which database for new projects again?' },
    ]);
    expect(turn.ledger.entries).toEqual([
      expect.objectContaining({ middleware: 'relevant-memory', included: 1, dropped: [] }),
    ]);
    expectLedgerAddsUp(turn.ledger, prompt);
    expect(await facts.list(alice)).toHaveLength(2);
    // Bob's conversations see none of it.
    const bob = await kioku.startConversation({ userId: 'bob' });
    const bobTurn = await bob.prepare('Which database for new projects?');
    expect(bobTurn.messages.map((m) => m.content)).toEqual([
      `You are helpful.\n\n${MEMORY_NOTICE}`,
      'Which database for new projects?',
    ]);
  });

  it('stores nothing when the turn ends without an answer', async () => {
    const { facts, kioku } = setup();
    const convo = await kioku.startConversation({ userId: 'alice' });
    const loop: ChatMessage = {
      role: 'assistant',
      content: '',
      toolCalls: [{ id: 'x', name: 'nope', arguments: '{}' }],
    };
    const result = await convo.run('loop forever', scriptedModel([loop, loop]), { maxSteps: 2 });
    expect(result.stepLimitReached).toBe(true);
    expect(await facts.list(alice)).toEqual([]);
  });

  it('obeys the autoRetrieve and autoStore switches, also when flipped at run time', async () => {
    const { facts, manager, kioku } = setup({ autoRetrieve: false, autoStore: false });
    await facts.create(alice, { content: 'User prefers Postgres for new projects' });
    const convo = await kioku.startConversation({ userId: 'alice' });
    const model = scriptedModel([
      { role: 'assistant', content: 'Maybe Postgres.' },
      { role: 'assistant', content: 'Postgres.' },
    ]);
    const off = await convo.run('Postgres for new projects?', model);
    expect(model.prompts[0]!.map((m) => m.content)).toEqual([
      `You are helpful.\n\n${MEMORY_NOTICE}`,
      'Postgres for new projects?',
    ]);
    expect(off.ledger.entries[0]).toMatchObject({ middleware: 'relevant-memory', tokens: 0, included: 0 });
    expect(await facts.list(alice)).toHaveLength(1);

    manager.autoRetrieve = true;
    manager.autoStore = true;
    await convo.run('Postgres for new projects?', model);
    expect(model.prompts[1]![1]!.content).toBe(
      `${MEMORIES_HEADER}\n1. [semantic, user] User prefers Postgres for new projects\n${MEMORIES_END}`,
    );
    expect((await facts.list(alice)).map((f) => f.content)).toContain(
      'User: Postgres for new projects?\nAssistant: Postgres.',
    );
  });

  it('fits the block in its share and accounts for what it dropped', async () => {
    const lines = [
      'Postgres is the database for new projects (decided in March)',
      'Postgres is the database for new projects (confirmed in April)',
      'Postgres is the database for new projects (still true in May)',
    ];
    const header = tok.count(`${MEMORIES_HEADER}\n1. [semantic, user] ${lines[0]}\n${MEMORIES_END}`) + 4;
    const { facts, kioku } = setup({ relevanceThreshold: 0.5 }, { maxTokens: 200, share: header + 5 });
    for (const content of lines) await facts.create(alice, { content });
    await facts.create(alice, { content: 'Hiking is fun; projects at work are not' });
    const convo = await kioku.startConversation({ userId: 'alice' });
    const turn = await convo.prepare('Which database for new projects?');
    const entry = turn.ledger.entries[0]!;
    expect(entry.included).toBe(1);
    expect(entry.tokens).toBeLessThanOrEqual(header + 5);
    expect(entry.dropped.filter((d) => d.reason === 'budget')).toHaveLength(2);
    expect(entry.dropped.filter((d) => d.reason === 'irrelevant')).toHaveLength(1);
    expect(turn.messages[1]!.content.split('\n')).toHaveLength(3);
    expectLedgerAddsUp(turn.ledger, turn.messages);
  });
  it('fills any share with consecutively numbered lines, counting each candidate once', async () => {
    // Counts every character the feature asks the tokenizer about: re-counting the block for every
    // candidate (the old fit) made this quadratic in the number of memories.
    let charsCounted = 0;
    const counting = {
      ...tok,
      count(text: string) {
        charsCounted += text.length;
        return tok.count(text);
      },
    };
    const facts = new InMemoryFactStore();
    for (let i = 0; i < 100; i++) {
      await facts.create(alice, {
        content: `Deploy note ${i}: the staging database migrations ran in ${i % 7} minutes, rollback plan ${i}.`,
      });
    }
    const manager = new RelevantMemory({ facts, maxMemories: 100, relevanceThreshold: 0 });
    for (const share of [30, 45, 120, 333, 800, 1500, 4000]) {
      const kioku = new KiokuBuilder({
        stores: bundleWith({}),
        budget: { maxTokens: 8000, shares: { 'relevant-memory': share } },
        tokenizer: counting,
      })
        .use(relevantMemory(manager))
        .build();
      const convo = await kioku.startConversation({ userId: 'alice' });
      charsCounted = 0;
      const turn = await convo.prepare('staging database migrations rollback plan');
      const entry = turn.ledger.entries[0]!;
      const block = turn.messages.find((m) => m.content.startsWith(MEMORIES_HEADER));
      const lines = block ? block.content.split('\n').slice(1, -1) : [];
      expect(lines.map((l) => l.slice(0, l.indexOf('.')))).toEqual(lines.map((_, i) => String(i + 1)));
      expect(entry.included).toBe(lines.length);
      expect(entry.tokens).toBeLessThanOrEqual(share);
      expect(entry.included + entry.dropped.length).toBe(100);
      if (share >= 4000) expect(entry.included).toBe(100);
      else expect(entry.dropped.some((d) => d.reason === 'budget')).toBe(true);
      // Linear: a few passes over the candidates' text, not one pass per candidate.
      const candidateChars = (await facts.list(alice)).reduce((n, f) => n + f.content.length + 16, 0);
      expect(charsCounted).toBeLessThan(4 * candidateChars);
      expectLedgerAddsUp(turn.ledger, turn.messages);
    }
  });
});
