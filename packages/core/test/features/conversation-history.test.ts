import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type ChatMessage,
  type ChatModel,
  type Conversation,
  conversationHistory,
  defaultTokenizer,
  defineTool,
  KiokuBuilder,
  type MemoryFeature,
  type TurnLedger,
} from '../../src/index.js';
import { countMessagesTokens } from '../../src/model/messages.js';
import { InMemorySessionStore } from '../../src/store/sessions/memory.js';
import { bundleWith } from '../bundle.js';
import { toolTokensOf } from './memory-features.harness.js';

const tok = defaultTokenizer;

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

const lookup: MemoryFeature = {
  name: 'lookup',
  toolkit: {
    name: 'lookup',
    tools: [
      defineTool({
        name: 'lookup',
        description: 'Look something up.',
        parameters: z.object({ q: z.string() }),
        execute: (args) => `result for ${args.q}`,
      }),
    ],
  },
};

async function setup(
  options: {
    maxTokens?: number;
    maxTurns?: number;
    transcriptCap?: number;
    sessions?: InMemorySessionStore;
  } = {},
) {
  const sessions =
    options.sessions ??
    new InMemorySessionStore(options.transcriptCap ? { transcriptCap: options.transcriptCap } : {});
  const kioku = new KiokuBuilder({
    stores: bundleWith({ sessions }),
    systemPrompt: 'You are helpful.',
    budget: { maxTokens: options.maxTokens ?? 16_000 },
  })
    .use(conversationHistory({ sessions, ...(options.maxTurns ? { maxTurns: options.maxTurns } : {}) }))
    .use(lookup)
    .build();
  return { sessions, kioku };
}

/** A turn with tool calls: `calls` calls in the first step, a second step with one call, then an answer. */
function toolTurn(n: number, calls: number): ChatMessage[] {
  const first: ChatMessage = {
    role: 'assistant',
    content: '',
    toolCalls: Array.from({ length: calls }, (_, i) => ({
      id: `t${n}-a${i}`,
      name: 'lookup',
      arguments: JSON.stringify({ q: `question ${n}.${i}` }),
    })),
  };
  const results: ChatMessage[] = first.toolCalls!.map((c) => ({
    role: 'tool',
    content: `result for ${c.arguments} ${'detail '.repeat(n % 4)}`,
    toolCallId: c.id,
    name: c.name,
  }));
  return [
    { role: 'user', content: `Question number ${n}, please look it up` },
    first,
    ...results,
    {
      role: 'assistant',
      content: 'Checking once more',
      toolCalls: [{ id: `t${n}-b`, name: 'lookup', arguments: '{"q":"again"}' }],
    },
    { role: 'tool', content: 'result for again', toolCallId: `t${n}-b`, name: 'lookup' },
    { role: 'assistant', content: `Answer ${n}: it is ${n * 7}.` },
  ];
}

function plainTurn(n: number): ChatMessage[] {
  return [
    { role: 'user', content: `Message ${n}` },
    { role: 'assistant', content: `Reply ${n}` },
  ];
}

function history(messages: ChatMessage[]): ChatMessage[] {
  // prompt = system prompt, replayed history, user message (no other middleware injects anything)
  return messages.slice(1, -1);
}

function expectLedgerAddsUp(ledger: TurnLedger, messages: ChatMessage[]) {
  expect(ledger.totalTokens).toBe(countMessagesTokens(tok, messages) + ledger.tools.tokens);
  expect(ledger.totalTokens).toBe(
    ledger.baseTokens + ledger.tools.tokens + ledger.entries.reduce((s, e) => s + e.tokens, 0),
  );
  expect(ledger.totalTokens).toBeLessThanOrEqual(ledger.maxTokens);
}

/** Every tool result answers a call of the assistant message just before its group, and every call is answered. */
function expectToolPairsIntact(messages: ChatMessage[]) {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role !== 'assistant' || !m.toolCalls?.length) continue;
    const results: string[] = [];
    for (let j = i + 1; j < messages.length && messages[j]!.role === 'tool'; j++)
      results.push(messages[j]!.toolCallId!);
    expect(results.sort()).toEqual(m.toolCalls.map((c) => c.id).sort());
  }
  for (let i = 0; i < messages.length; i++) {
    if (messages[i]!.role !== 'tool') continue;
    let j = i - 1;
    while (j >= 0 && messages[j]!.role === 'tool') j--;
    const owner = messages[j];
    expect(owner?.role).toBe('assistant');
    expect(owner?.toolCalls?.map((c) => c.id)).toContain(messages[i]!.toolCallId);
  }
}

async function append(sessions: InMemorySessionStore, convo: Conversation, messages: ChatMessage[]) {
  await sessions.transcriptAppend(convo.scope, convo.sessionId, messages);
}

describe('conversationHistory', () => {
  it('replays earlier turns, tool calls included, between the system prompt and the user message', async () => {
    const { kioku } = await setup();
    const convo = await kioku.startConversation({ userId: 'alice', agentId: 'bot' });
    const model = scriptedModel([
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{"q":"tea"}' }] },
      { role: 'assistant', content: 'Tea is a drink.' },
      { role: 'assistant', content: 'You asked about tea.' },
    ]);
    const first = await convo.run('What is tea?', model);
    expect(first.ledger.entries).toEqual([
      { middleware: 'conversation', allottedTokens: 3_000, tokens: 0, included: 0, dropped: [] },
    ]);
    const second = await convo.run('What did I ask?', model);
    const prompt = model.prompts[2]!;
    expect(prompt).toEqual([
      { role: 'system', content: 'You are helpful.' },
      { role: 'user', content: 'What is tea?' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{"q":"tea"}' }] },
      { role: 'tool', content: 'result for tea', toolCallId: 'c1', name: 'lookup' },
      { role: 'assistant', content: 'Tea is a drink.' },
      { role: 'user', content: 'What did I ask?' },
    ]);
    expect(second.ledger.entries[0]).toMatchObject({ middleware: 'conversation', included: 1, dropped: [] });
    expectLedgerAddsUp(second.ledger, prompt);
  });

  it('replays the last 20 turns by default and reports older ones as over the limit', async () => {
    const { sessions, kioku } = await setup();
    const convo = await kioku.startConversation({ userId: 'alice' });
    await append(sessions, convo, Array.from({ length: 25 }, (_, n) => plainTurn(n)).flat());
    const turn = await convo.prepare('Next');
    const replayed = history(turn.messages);
    expect(replayed).toHaveLength(40);
    expect(replayed[0]).toEqual({ role: 'user', content: 'Message 5' });
    expect(replayed.at(-1)).toEqual({ role: 'assistant', content: 'Reply 24' });
    const entry = turn.ledger.entries[0]!;
    expect(entry.included).toBe(20);
    expect(entry.dropped).toEqual(
      [0, 1, 2, 3, 4].map((n) => ({
        id: `turn-${n}`,
        reason: 'limit',
        tokens: countMessagesTokens(tok, plainTurn(n)),
      })),
    );
    expectLedgerAddsUp(turn.ledger, turn.messages);
  });

  it('honours maxTurns', async () => {
    const { sessions, kioku } = await setup({ maxTurns: 3 });
    const convo = await kioku.startConversation({ userId: 'alice' });
    await append(sessions, convo, Array.from({ length: 5 }, (_, n) => plainTurn(n)).flat());
    const turn = await convo.prepare('Next');
    expect(
      history(turn.messages)
        .filter((m) => m.role === 'user')
        .map((m) => m.content),
    ).toEqual(['Message 2', 'Message 3', 'Message 4']);
  });

  it('reads only the end of a long transcript and names the older turns as one entry', async () => {
    const { sessions, kioku } = await setup({ maxTurns: 3 });
    const convo = await kioku.startConversation({ userId: 'alice' });
    // Turns of varied length (a tool exchange every third turn), so the first window guessed is short.
    const turns = Array.from({ length: 60 }, (_, n) => (n % 3 ? plainTurn(n) : toolTurn(n, 3)));
    await append(sessions, convo, turns.flat());
    const reads: number[] = [];
    const read = sessions.transcriptReadLast.bind(sessions);
    sessions.transcriptReadLast = (scope, id, n) => {
      reads.push(n);
      return read(scope, id, n);
    };
    const turn = await convo.prepare('Next');
    reads.length = 0;
    const again = await convo.prepare('Next');
    expect(history(turn.messages)).toEqual(turns.slice(57).flat());
    expect(history(again.messages)).toEqual(history(turn.messages));
    expect(Math.max(...reads)).toBeLessThan(turns.flat().length);
    const entry = turn.ledger.entries[0]!;
    expect(entry.included).toBe(3);
    expect(entry.dropped[0]).toEqual({ id: 'older-turns', reason: 'limit', count: expect.any(Number) });
    // Every turn is accounted for: the group, the turns read beyond maxTurns, the replayed ones.
    const listed = entry.dropped.slice(1).filter((d) => d.id.startsWith('turn-'));
    expect(entry.dropped[0]!.count! + listed.length + entry.included).toBe(60);
    expectLedgerAddsUp(turn.ledger, turn.messages);
  });

  it('drops the oldest whole turns first when the budget is tight', async () => {
    const { sessions, kioku } = await setup();
    const probe = await kioku.startConversation({ userId: 'alice' });
    const turns = Array.from({ length: 6 }, (_, n) => plainTurn(n));
    await append(sessions, probe, turns.flat());
    // The system prompt, the user message and the tool definitions come first.
    const base =
      countMessagesTokens(tok, [
        { role: 'system', content: 'You are helpful.' },
        { role: 'user', content: 'Next' },
      ]) + toolTokensOf(kioku);
    const cost = (n: number) => countMessagesTokens(tok, turns[n]!);
    // Room for exactly the three newest turns plus a few tokens: turn 2 must not fit.
    const room = cost(3) + cost(4) + cost(5) + cost(2) - 1;
    const { kioku: tight } = await setup({ maxTokens: base + room, sessions });
    const convo = await tight.resumeConversation({ userId: 'alice' }, probe.sessionId);
    const turn = await convo.prepare('Next');
    expect(history(turn.messages)).toEqual(turns.slice(3).flat());
    expect(turn.ledger.entries[0]!.dropped).toEqual([
      { id: 'turn-0', reason: 'budget', tokens: cost(0) },
      { id: 'turn-1', reason: 'budget', tokens: cost(1) },
      { id: 'turn-2', reason: 'budget', tokens: cost(2) },
    ]);
    expectLedgerAddsUp(turn.ledger, turn.messages);
  });

  it('never separates a tool call from its result, at any budget', async () => {
    const { sessions, kioku } = await setup();
    const probe = await kioku.startConversation({ userId: 'alice' });
    const turns = Array.from({ length: 8 }, (_, n) =>
      n % 3 === 2 ? plainTurn(n) : toolTurn(n, 1 + (n % 3)),
    );
    await append(sessions, probe, turns.flat());
    // The system prompt, the user message and the tool definitions come first.
    const base =
      countMessagesTokens(tok, [
        { role: 'system', content: 'You are helpful.' },
        { role: 'user', content: 'Next' },
      ]) + toolTokensOf(kioku);
    const full = countMessagesTokens(tok, turns.flat());
    const included = new Set<number>();
    for (let room = 0; room <= full + 5; room += 3) {
      const { kioku: k } = await setup({ maxTokens: base + room, sessions });
      const convo = await k.resumeConversation({ userId: 'alice' }, probe.sessionId);
      const turn = await convo.prepare('Next');
      const replayed = history(turn.messages);
      expectToolPairsIntact(replayed);
      expect(replayed[0]?.role ?? 'user').toBe('user');
      // Whole turns: the replay is exactly the newest `included` turns.
      const entry = turn.ledger.entries[0]!;
      expect(replayed).toEqual(turns.slice(turns.length - entry.included).flat());
      expect(entry.included + entry.dropped.length).toBe(turns.length);
      expectLedgerAddsUp(turn.ledger, turn.messages);
      included.add(entry.included);
    }
    // The loop went from nothing to everything, through every intermediate count.
    expect([...included].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('drops the orphaned tail of a turn the transcript cap cut', async () => {
    const { sessions, kioku } = await setup({ transcriptCap: 11 });
    const convo = await kioku.startConversation({ userId: 'alice' });
    // toolTurn(0, 2) has 7 entries, plainTurns 2 each: 11 fit; two more evict the user entry and the
    // assistant's tool calls, so the transcript starts with two orphaned tool results.
    await append(sessions, convo, [...toolTurn(0, 2), ...plainTurn(1), ...plainTurn(2)]);
    await append(sessions, convo, [{ role: 'user', content: 'Message 3' }]);
    await append(sessions, convo, [{ role: 'assistant', content: 'Reply 3' }]);
    const stored = await sessions.transcriptReadLast(convo.scope, convo.sessionId, 100);
    expect(stored[0]!.role).toBe('tool');
    const turn = await convo.prepare('Next');
    const replayed = history(turn.messages);
    expect(replayed).toEqual([...plainTurn(1), ...plainTurn(2), ...plainTurn(3)]);
    expect(turn.ledger.entries[0]!.dropped).toEqual([
      { id: 'partial-turn', reason: 'limit', tokens: countMessagesTokens(tok, toolTurn(0, 2).slice(2)) },
    ]);
  });

  it('removes tool calls left without a result and results without a call', async () => {
    const { sessions, kioku } = await setup();
    const convo = await kioku.startConversation({ userId: 'alice' });
    await append(sessions, convo, [
      { role: 'user', content: 'Do two things' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 'ok', name: 'lookup', arguments: '{"q":"a"}' },
          { id: 'lost', name: 'lookup', arguments: '{"q":"b"}' },
        ],
      },
      { role: 'tool', content: 'a', toolCallId: 'ok', name: 'lookup' },
      { role: 'tool', content: 'stray', toolCallId: 'nobody', name: 'lookup' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'never', name: 'lookup', arguments: '{}' }] },
      { role: 'user', content: 'Hello again' },
      { role: 'assistant', content: 'Hi' },
    ]);
    const turn = await convo.prepare('Next');
    const replayed = history(turn.messages);
    expect(replayed).toEqual([
      { role: 'user', content: 'Do two things' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'ok', name: 'lookup', arguments: '{"q":"a"}' }] },
      { role: 'tool', content: 'a', toolCallId: 'ok', name: 'lookup' },
      { role: 'user', content: 'Hello again' },
      { role: 'assistant', content: 'Hi' },
    ]);
    expectToolPairsIntact(replayed);
  });

  it('replays only the session’s own transcript', async () => {
    const { sessions, kioku } = await setup();
    const alice = await kioku.startConversation({ userId: 'alice' });
    await append(sessions, alice, plainTurn(1));
    const aliceOther = await kioku.startConversation({ userId: 'alice' });
    const bob = await kioku.startConversation({ userId: 'bob' });
    expect(history((await bob.prepare('Hi')).messages)).toEqual([]);
    expect(history((await aliceOther.prepare('Hi')).messages)).toEqual([]);
    const resumed = await kioku.resumeConversation({ userId: 'alice' }, alice.sessionId);
    expect(history((await resumed.prepare('Hi')).messages)).toEqual(plainTurn(1));
  });

  it('counts a transcript entry again when a store hands back the same object with new content', async () => {
    // The partitioned stores return frozen entries and the feature caches their counts; a store that
    // returns mutable objects it later edits must not be budgeted by a stale count.
    const base = new InMemorySessionStore();
    const copies = new Map<object, { content: string }>();
    const sessions = new Proxy(base, {
      get(target, prop) {
        if (prop === 'transcriptReadLast') {
          return async (...args: Parameters<InMemorySessionStore['transcriptReadLast']>) =>
            (await target.transcriptReadLast(...args)).map((entry) => {
              const known = copies.get(entry);
              if (known) return known;
              const copy = { ...entry };
              copies.set(entry, copy);
              return copy;
            });
        }
        const value = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const turn0 = plainTurn(0);
    const base0 = countMessagesTokens(tok, [
      { role: 'system', content: 'You are helpful.' },
      { role: 'user', content: 'Next' },
    ]);
    const kioku = new KiokuBuilder({
      stores: bundleWith({ sessions }),
      systemPrompt: 'You are helpful.',
      budget: { maxTokens: base0 + countMessagesTokens(tok, turn0) + 5 },
    })
      .use(conversationHistory({ sessions }))
      .build();
    const convo = await kioku.startConversation({ userId: 'alice' });
    await sessions.transcriptAppend(convo.scope, convo.sessionId, turn0);
    expect(history((await convo.prepare('Next')).messages)).toEqual(turn0);
    const reply = [...copies.values()].find((e) => e.content === 'Reply 0')!;
    reply.content = 'A reply that has become far too long to fit in the few tokens left for replay.';
    const turn = await convo.prepare('Next');
    expect(history(turn.messages)).toEqual([]);
    expect(turn.ledger.entries[0]!.dropped).toEqual([
      {
        id: 'turn-0',
        reason: 'budget',
        tokens: countMessagesTokens(tok, [turn0[0]!, { role: 'assistant', content: reply.content }]),
      },
    ]);
    expectLedgerAddsUp(turn.ledger, turn.messages);
  });

  it('rejects invalid options', () => {
    const sessions = new InMemorySessionStore();
    expect(() => conversationHistory({ sessions, maxTurns: 0 })).toThrow(/maxTurns/);
    expect(() => conversationHistory({ sessions, maxEntries: 1.5 })).toThrow(/maxEntries/);
  });
});

describe('conversationHistory with a large old tool result', () => {
  const bigLog = Array.from(
    { length: 3_000 },
    (_, i) => `2026-11-24 line ${i}: request served in ${i % 97} ms`,
  ).join('\n');
  const turns: ChatMessage[][] = [
    [
      { role: 'user', content: 'Hi, I am Ana.' },
      { role: 'assistant', content: 'Nice to meet you, Ana.' },
    ],
    [
      { role: 'user', content: 'Show me the server log.' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'c1', name: 'retrieve_memory', arguments: '{"id":"log1"}' }],
      },
      { role: 'tool', content: bigLog, toolCallId: 'c1', name: 'retrieve_memory' },
      { role: 'assistant', content: 'The log shows normal traffic.' },
    ],
  ];

  it('shrinks the old tool result before it drops any turn, so "I am Ana" stays in the replay', async () => {
    const { sessions, kioku } = await setup();
    const probe = await kioku.startConversation({ userId: 'alice' });
    await append(sessions, probe, turns.flat());
    // Room for both turns with a shrunk log, far from room for the log itself (~40k tokens).
    const { kioku: tight } = await setup({ maxTokens: 2_000, sessions });
    const turn = await (await tight.resumeConversation({ userId: 'alice' }, probe.sessionId)).prepare(
      'Who am I?',
    );
    const replayed = history(turn.messages);
    expect(replayed[0]).toEqual({ role: 'user', content: 'Hi, I am Ana.' });
    expectToolPairsIntact(replayed);
    const tool = replayed.find((m) => m.role === 'tool')!;
    expect(tool.content).toMatch(/more tokens of this tool output left out of the replay\]$/);
    expect(tok.count(tool.content)).toBeLessThan(150);
    const entry = turn.ledger.entries[0]!;
    expect(entry.included).toBe(2);
    expect(entry.dropped).toEqual([expect.objectContaining({ id: 'turn-1/tool-results', reason: 'shrunk' })]);
    expectLedgerAddsUp(turn.ledger, turn.messages);
  });

  it('keeps only the MemoryRef of an offloaded result that is still too large', async () => {
    const { sessions, kioku } = await setup();
    const probe = await kioku.startConversation({ userId: 'alice' });
    const ref = '[MemoryRef: log1 - server log - 40000 tokens]';
    const withRef = turns.map((t) =>
      t.map((m) => (m.role === 'tool' ? { ...m, content: `${ref}\nSummary: ${bigLog.slice(0, 4_000)}` } : m)),
    );
    await append(sessions, probe, withRef.flat());
    const { kioku: tight } = await setup({ maxTokens: 1_000, sessions });
    const turn = await (await tight.resumeConversation({ userId: 'alice' }, probe.sessionId)).prepare(
      'Who am I?',
    );
    const tool = history(turn.messages).find((m) => m.role === 'tool')!;
    expect(tool.content.startsWith(`${ref}\n`)).toBe(true);
    expect(history(turn.messages)[0]?.content).toBe('Hi, I am Ana.');
  });
});
