import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type ChatMessage,
  type ChatModel,
  countMessagesTokens,
  currentScope,
  defaultTokenizer,
  defineTool,
  InMemoryFactStore,
  InMemorySessionStore,
  KiokuBuilder,
  type MemoryFeature,
  type PromptMiddleware,
} from '../src/index.js';

/** A middleware that injects one system message per fact, as many as fit. */
function factsBlock(facts: InMemoryFactStore, name = 'dynamic-memory'): PromptMiddleware {
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
  const kioku = new KiokuBuilder({ sessions, systemPrompt: 'You are helpful.', budget: { maxTokens } })
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
      expect.objectContaining({ middleware: 'dynamic-memory', included: 1, dropped: [] }),
    ]);
    expect(turn.tools.map((t) => t.function.name)).toEqual(['remember']);
  });

  it('never exceeds the budget and records what it dropped', async () => {
    const { facts, kioku } = await setup(60);
    for (let i = 0; i < 20; i++)
      await facts.create({ userId: 'alice' }, { content: `Fact number ${i} about things` });
    const convo = await kioku.startConversation({ userId: 'alice' });
    const turn = await convo.prepare('Hi');
    expect(countMessagesTokens(defaultTokenizer, turn.messages)).toBeLessThanOrEqual(60);
    expect(turn.ledger.totalTokens).toBeLessThanOrEqual(60);
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

  it('refuses to resume another user’s session', async () => {
    const { kioku } = await setup();
    const convo = await kioku.startConversation({ userId: 'alice' });
    await expect(kioku.resumeConversation({ userId: 'mallory' }, convo.sessionId)).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });
});
