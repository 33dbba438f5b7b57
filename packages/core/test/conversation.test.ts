import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type ChatMessage,
  type ChatModel,
  createInMemoryStores,
  currentScope,
  defaultTokenizer,
  defineTool,
  KiokuBuilder,
  type MemoryFeature,
  type PromptMiddleware,
  StorageError,
  TurnNotRecordedError,
} from '../src/index.js';
import { parseMemoryRef } from '../src/memory/offload/ref.js';
import { MEMORY_NOTICE } from '../src/memory/trust/fence.js';
import { countMessagesTokens } from '../src/model/messages.js';
import { InMemoryFactStore } from '../src/store/facts/memory.js';
import { InMemorySessionStore } from '../src/store/sessions/memory.js';
import { bundleWith } from './bundle.js';

/** A middleware that injects one system message per fact, as many as fit. */
function factsBlock(facts: InMemoryFactStore, name = 'facts'): PromptMiddleware {
  return {
    name,
    placement: 'system',
    async inject(ctx) {
      const all = await facts.list(ctx.scope);
      const messages: ChatMessage[] = [];
      const dropped = [];
      for (const fact of all) {
        const message: ChatMessage = { role: 'system', content: `- ${fact.content}` };
        if (countMessagesTokens(ctx.tokenizer, [...messages, message]) <= ctx.maxTokens)
          messages.push(message);
        else dropped.push({ id: fact.id, reason: 'budget' as const });
      }
      return { messages, included: messages.length, dropped };
    },
  };
}

const rememberTool = (facts: InMemoryFactStore) =>
  defineTool({
    name: 'remember',
    description: 'Remember a fact about the user.',
    parameters: z.object({ content: z.string().min(1) }),
    async execute(args) {
      const fact = await facts.create(currentScope(), {
        content: args.content,
        provenance: { source: 'assistant' },
      });
      return { saved: fact.id };
    },
  });

/** A model that replays scripted replies and records the prompts it saw. */
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

async function setup(maxTokens = 16_000) {
  const facts = new InMemoryFactStore();
  const sessions = new InMemorySessionStore();
  const feature: MemoryFeature = {
    name: 'facts',
    middleware: factsBlock(facts),
    toolkit: { name: 'facts', tools: [rememberTool(facts)] },
  };
  const kioku = new KiokuBuilder({
    stores: bundleWith({ sessions }),
    systemPrompt: 'You are helpful.',
    budget: { maxTokens },
  })
    .use(feature)
    .build();
  return { facts, sessions, kioku };
}

describe('Conversation', () => {
  it('injects memory after the system prompt and accounts for every token in the ledger', async () => {
    const { facts, kioku } = await setup();
    await facts.create({ userId: 'alice' }, { content: 'Prefers tea' });
    const convo = await kioku.startConversation({ userId: 'alice' });
    const turn = await convo.prepare('What do I drink?');
    expect(turn.messages.map((m) => m.role)).toEqual(['system', 'system', 'user']);
    expect(turn.messages[1]?.content).toBe('- Prefers tea');
    const { ledger } = turn;
    expect(ledger.totalTokens).toBe(
      countMessagesTokens(defaultTokenizer, turn.messages) + ledger.tools.tokens,
    );
    expect(ledger.totalTokens).toBe(
      ledger.baseTokens + ledger.tools.tokens + ledger.entries.reduce((s, e) => s + e.tokens, 0),
    );
    expect(ledger.entries).toEqual([
      expect.objectContaining({ middleware: 'facts', included: 1, dropped: [] }),
    ]);
    expect(turn.tools.map((t) => t.function.name)).toEqual(['remember']);
  });

  it('never exceeds the budget and records what it dropped', async () => {
    const { facts, kioku } = await setup(90);
    for (let i = 0; i < 20; i++)
      await facts.create({ userId: 'alice' }, { content: `Fact number ${i} about things` });
    const convo = await kioku.startConversation({ userId: 'alice' });
    const turn = await convo.prepare('Hi');
    expect(countMessagesTokens(defaultTokenizer, turn.messages)).toBeLessThanOrEqual(90);
    expect(turn.ledger.totalTokens).toBeLessThanOrEqual(90);
    const entry = turn.ledger.entries[0]!;
    expect(entry.included + entry.dropped.length).toBe(20);
    expect(entry.dropped.every((d) => d.reason === 'budget')).toBe(true);
  });

  it('runs tool calls in the user scope, returns bad arguments to the model, and records the turn', async () => {
    const { facts, sessions, kioku } = await setup();
    const convo = await kioku.startConversation({ userId: 'alice' });
    const model = scriptedModel([
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 'c1', name: 'remember', arguments: '{"content": 42}' },
          { id: 'c2', name: 'remember', arguments: 'not json' },
          { id: 'c3', name: 'nope', arguments: '{}' },
          { id: 'c4', name: 'remember', arguments: '{"content":"Likes jazz"}' },
        ],
      },
      { role: 'assistant', content: 'Noted: you like jazz.' },
    ]);
    const result = await convo.run('I like jazz', model);
    expect(result.answer).toBe('Noted: you like jazz.');
    expect(result.steps).toBe(2);
    const toolMessages = result.messages.filter((m) => m.role === 'tool');
    expect(toolMessages.map((m) => JSON.parse(m.content).error?.code ?? 'ok')).toEqual([
      'VALIDATION',
      'INVALID_JSON',
      'UNKNOWN_TOOL',
      'ok',
    ]);
    expect((await facts.list({ userId: 'alice' })).map((f) => f.content)).toEqual(['Likes jazz']);
    expect(await facts.list({ userId: 'bob' })).toEqual([]);
    // The model saw the tool results on its second call.
    expect(model.prompts[1]!.filter((m) => m.role === 'tool')).toHaveLength(4);
    const transcript = await sessions.transcriptReadLast({ userId: 'alice' }, convo.sessionId, 100);
    expect(transcript.map((t) => t.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'tool',
      'tool',
      'tool',
      'assistant',
    ]);
  });

  it("keeps a reply's usage out of the messages and the transcript", async () => {
    const { sessions, kioku } = await setup();
    const convo = await kioku.startConversation({ userId: 'alice' });
    const model: ChatModel = {
      complete: async () => ({
        role: 'assistant',
        content: 'Hi.',
        usage: { inputTokens: 9, outputTokens: 2 },
      }),
    };
    const result = await convo.run('hello', model);
    expect(result.messages.at(-1)).toEqual({ role: 'assistant', content: 'Hi.' });
    const transcript = await sessions.transcriptReadLast({ userId: 'alice' }, convo.sessionId, 10);
    expect(transcript.at(-1)).not.toHaveProperty('usage');
  });

  it('records what the turn produced when the model fails', async () => {
    const { sessions, kioku } = await setup();
    const convo = await kioku.startConversation({ userId: 'alice' });
    const model = scriptedModel([]);
    await expect(convo.run('hello?', model)).rejects.toThrow('model script exhausted');
    const transcript = await sessions.transcriptReadLast({ userId: 'alice' }, convo.sessionId, 10);
    expect(transcript.map((t) => t.content)).toEqual(['hello?']);
  });

  it('stops at the step limit', async () => {
    const { kioku } = await setup();
    const convo = await kioku.startConversation({ userId: 'alice' });
    const loop: ChatMessage = {
      role: 'assistant',
      content: '',
      toolCalls: [{ id: 'x', name: 'remember', arguments: '{"content":"again"}' }],
    };
    const result = await convo.run('loop', scriptedModel([loop, loop, loop]), { maxSteps: 3 });
    expect(result.stepLimitReached).toBe(true);
    expect(result.answer).toBe('');
  });

  it("counts what the app sends besides Kioku's prompt before any memory block", async () => {
    const { facts, kioku } = await setup(120);
    for (let i = 0; i < 20; i++)
      await facts.create({ userId: 'alice' }, { content: `Fact number ${i} about things` });
    const convo = await kioku.startConversation({ userId: 'alice' });
    const alone = await convo.prepare('Hi');
    const appMessages: ChatMessage[] = [
      { role: 'system', content: 'Answer in French, briefly, and politely.' },
    ];
    const appTools = [
      {
        type: 'function' as const,
        function: { name: 'weather', description: 'The weather in a city.', parameters: { type: 'object' } },
      },
    ];
    const turn = await convo.prepare('Hi', { appMessages, appTools });
    const appMessageTokens = countMessagesTokens(defaultTokenizer, appMessages);
    expect(turn.ledger.baseTokens).toBe(alone.ledger.baseTokens + appMessageTokens);
    expect(turn.ledger.tools.definitions).toBe(2);
    expect(turn.ledger.tools.tokens).toBeGreaterThan(alone.ledger.tools.tokens);
    expect(turn.ledger.totalTokens).toBeLessThanOrEqual(120);
    // The memory block got less room; the app's own messages are not part of Kioku's prompt.
    expect(turn.ledger.entries[0]!.included).toBeLessThan(alone.ledger.entries[0]!.included);
    expect(turn.messages.map((m) => m.content)).not.toContain(appMessages[0]!.content);
    const huge: ChatMessage[] = [{ role: 'system', content: 'word '.repeat(200) }];
    await expect(convo.prepare('Hi', { appMessages: huge })).rejects.toMatchObject({ code: 'VALIDATION' });
  });

  it('splits the prompt into the system part and replayed history', async () => {
    const { facts, kioku } = await setup();
    await facts.create({ userId: 'alice' }, { content: 'Prefers tea' });
    const convo = await kioku.startConversation({ userId: 'alice' });
    const turn = await convo.prepare('What do I drink?');
    expect(turn.system.map((m) => m.content)).toEqual([
      `You are helpful.\n\n${MEMORY_NOTICE}`,
      '- Prefers tea',
    ]);
    expect(turn.history).toEqual([]);
    expect(turn.messages).toEqual([
      ...turn.system,
      ...turn.history,
      { role: 'user', content: 'What do I drink?' },
    ]);
  });

  it("passes another tool's output through the output processors in the user's scope", async () => {
    const stores = createInMemoryStores();
    const kioku = new KiokuBuilder({ stores }).withToolOutputOffload({ thresholdTokens: 50 }).build();
    const convo = await kioku.startConversation({ userId: 'alice' });
    const page = Array.from({ length: 80 }, (_, i) => `Line ${i} of the fetched page.`).join('\n');
    const call = { id: 'call_1', name: 'fetch_page', arguments: '{"url":"https://example.com"}' };
    const content = await convo.processToolOutput(call, page);
    const ref = parseMemoryRef(content);
    expect(ref).not.toBeNull();
    expect((await stores.details.get({ userId: 'alice' }, ref!.id))?.content).toBe(page);
    expect(await stores.details.get({ userId: 'bob' }, ref!.id)).toBeNull();
    expect(await convo.processToolOutput(call, 'short')).toBe('short');
  });

  it('refuses to resume another user’s session', async () => {
    const { kioku } = await setup();
    const convo = await kioku.startConversation({ userId: 'alice' });
    await expect(kioku.resumeConversation({ userId: 'mallory' }, convo.sessionId)).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });

  it("a new conversation's first turn reads its memory beside the count of its turns; an imported history still counts", async () => {
    const sessions = new InMemorySessionStore();
    const events: string[] = [];
    // The count of a session's turns (the whole transcript) waits until the test lets it go.
    let release!: () => void;
    const counted = new Promise<void>((resolve) => {
      release = resolve;
    });
    const readLast = sessions.transcriptReadLast.bind(sessions);
    sessions.transcriptReadLast = async (scope, sessionId, n) => {
      events.push('count');
      await counted;
      return readLast(scope, sessionId, n);
    };
    let readStarted!: () => void;
    const reading = new Promise<void>((resolve) => {
      readStarted = resolve;
    });
    const prefetches: number[] = [];
    const injected: Array<{ turnIndex: number; prefetched: unknown }> = [];
    const reader: PromptMiddleware = {
      name: 'reader',
      placement: 'system',
      async prefetch(ctx) {
        events.push(`read turn ${ctx.turnIndex}`);
        prefetches.push(ctx.turnIndex);
        readStarted();
        return ctx.turnIndex;
      },
      async inject(ctx) {
        injected.push({ turnIndex: ctx.turnIndex, prefetched: await ctx.prefetched });
        return { messages: [], included: 0, dropped: [] };
      },
    };
    const kioku = new KiokuBuilder({ stores: bundleWith({ sessions }) })
      .use({ name: 'reader', middleware: reader })
      .build();

    const fresh = await kioku.startConversation({ userId: 'alice' });
    const preparing = fresh.prepare('hello?');
    // The reads start while the count still waits (one round trip on a networked store, not two in turn);
    // read after the count, they would never start and the test would time out here.
    await reading;
    expect(events.sort()).toEqual(['count', 'read turn 0']);
    release();
    expect((await preparing).turnIndex).toBe(0);
    expect(injected).toEqual([{ turnIndex: 0, prefetched: 0 }]);

    // A history written through the store before the first prepare: the count says turn 1, and the reads
    // start again as turn 1.
    const imported = await kioku.startConversation({ userId: 'alice' });
    await sessions.transcriptAppend({ userId: 'alice' }, imported.sessionId, [
      { role: 'user', content: 'an imported question' },
      { role: 'assistant', content: 'an imported answer' },
    ]);
    prefetches.length = 0;
    injected.length = 0;
    expect((await imported.prepare('and now?')).turnIndex).toBe(1);
    expect(prefetches).toEqual([0, 1]);
    expect(injected).toEqual([{ turnIndex: 1, prefetched: 1 }]);

    // A resumed conversation counts first, then reads.
    events.length = 0;
    const resumed = await kioku.resumeConversation({ userId: 'alice' }, imported.sessionId);
    await resumed.prepare('again?');
    expect(events).toEqual(['count', 'read turn 1']);
  });

  it('stores a turn once however often record is retried with its turn id, and the features react once', async () => {
    const { sessions, kioku } = await setup();
    const convo = await kioku.startConversation({ userId: 'alice' });
    const turn: ChatMessage[] = [
      { role: 'user', content: 'hello?' },
      { role: 'assistant', content: 'hi' },
    ];
    await convo.record(turn, { turnId: 'turn-1' });
    await convo.record(turn, { turnId: 'turn-1' });
    await convo.record([{ role: 'user', content: 'again' }], { turnId: 'turn-2' });
    const transcript = await sessions.transcriptReadLast({ userId: 'alice' }, convo.sessionId, 10);
    expect(transcript.map((e) => [e.content, e.turnId ?? null])).toEqual([
      ['hello?', 'turn-1'],
      ['hi', null],
      ['again', 'turn-2'],
    ]);
    // The turn count stays right: the next prepare is the third turn of the session.
    expect((await convo.prepare('third')).turnIndex).toBe(2);
  });

  it('a turn whose recording fails is a TurnNotRecordedError with what a retry needs; the retry stores it once', async () => {
    const sessions = new InMemorySessionStore();
    let failures = 1;
    // The append is applied, then its answer is lost: the ambiguous failure of a networked store.
    const append: typeof sessions.transcriptAppend = async (...args) => {
      const appended = await sessions.transcriptAppend(...args);
      if (failures-- > 0) throw new StorageError('connection lost', { retryable: true });
      return appended;
    };
    const flaky = new Proxy(sessions, {
      get: (target, key) => {
        if (key === 'transcriptAppend') return append;
        const value = Reflect.get(target, key);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const kioku = new KiokuBuilder({ stores: bundleWith({ sessions: flaky }) }).build();
    const convo = await kioku.startConversation({ userId: 'alice' });
    const error = await convo
      .run('hello?', scriptedModel([{ role: 'assistant', content: 'hi' }]), { turnId: 't1' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TurnNotRecordedError);
    const failed = error as TurnNotRecordedError;
    expect(failed).toMatchObject({
      code: 'STORAGE',
      retryable: true,
      turnId: 't1',
      sessionId: convo.sessionId,
    });
    expect(failed.messages.map((m) => (m as ChatMessage).content)).toEqual(['hello?', 'hi']);
    await convo.record(failed.messages as ChatMessage[], { turnId: failed.turnId });
    const transcript = await sessions.transcriptReadLast({ userId: 'alice' }, convo.sessionId, 10);
    expect(transcript.map((e) => e.content)).toEqual(['hello?', 'hi']);
  });

  it("starts every middleware's store reads before the first inject, and hands each its own", async () => {
    const calls: string[] = [];
    const middleware = (name: string): PromptMiddleware => ({
      name,
      placement: 'system',
      async prefetch() {
        calls.push(`prefetch ${name}`);
        return `read by ${name}`;
      },
      async inject(ctx) {
        calls.push(`inject ${name}: ${await ctx.prefetched}`);
        return { messages: [], included: 0, dropped: [] };
      },
    });
    const kioku = new KiokuBuilder({ stores: createInMemoryStores() })
      .use({ name: 'a', middleware: middleware('a') })
      .use({ name: 'b', middleware: middleware('b') })
      .build();
    const convo = await kioku.startConversation({ userId: 'alice' });
    await convo.prepare('hello');
    expect(calls).toEqual(['prefetch a', 'prefetch b', 'inject a: read by a', 'inject b: read by b']);
  });
});
