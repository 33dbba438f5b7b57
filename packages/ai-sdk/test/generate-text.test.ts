import { parseMemoryRef } from '@kioku/core/adapter';
import { MEMORY_NOTICE } from '@kioku/core/model';
import { APICallError, generateText, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  callTools,
  memoryStack,
  page,
  reply,
  scriptedModel,
  systemText,
  toolResultText,
} from './support/scripted.js';

const alice = { userId: 'alice' };

describe('the middleware with generateText', () => {
  it('puts the memory blocks after the app’s system prompt, within the budget, and records the turn', async () => {
    const { stores, memoryFor } = memoryStack();
    await stores.facts.create(alice, { content: 'Lives in Lisbon', category: 'user-facts' });
    const memory = await memoryFor('alice');
    const mock = scriptedModel([reply('You live in Lisbon.')]);
    const model = wrapLanguageModel({ model: mock, middleware: memory.middleware });

    const result = await generateText({
      model,
      tools: memory.tools,
      system: 'Answer briefly.',
      prompt: 'Where do I live?',
    });

    expect(result.text).toBe('You live in Lisbon.');
    const prompt = mock.doGenerateCalls[0]!.prompt;
    expect(prompt[0]).toEqual({ role: 'system', content: 'Answer briefly.' });
    expect(prompt[1]).toEqual({
      role: 'system',
      content: `You are a test agent with memory.\n\n${MEMORY_NOTICE}`,
    });
    expect(systemText(prompt)).toMatch(/\[DYNAMIC_MEMORY\][\s\S]*Lives in Lisbon/);
    expect(prompt.at(-1)).toMatchObject({
      role: 'user',
      content: [{ type: 'text', text: 'Where do I live?' }],
    });

    const ledger = memory.ledger!;
    expect(ledger.totalTokens).toBeLessThanOrEqual(ledger.maxTokens);
    expect(ledger.entries.find((e) => e.middleware === 'facts')).toMatchObject({ included: 1 });
    expect(ledger.tools.definitions).toBe(memory.conversation.tools.length);

    const transcript = await stores.sessions.transcriptReadLast(alice, memory.conversation.sessionId, 10);
    expect(transcript.map((t) => [t.role, t.content])).toEqual([
      ['user', 'Where do I live?'],
      ['assistant', 'You live in Lisbon.'],
    ]);
  });

  it('makes the app’s own messages and tools pay from the same budget', async () => {
    const { stores, memoryFor } = memoryStack({ maxTokens: 1_900 });
    for (let i = 0; i < 40; i++) {
      await stores.facts.create(alice, { content: `Fact ${i}: the user owns a collection of maps` });
    }
    const alone = await memoryFor('alice');
    await generateText({
      model: wrapLanguageModel({ model: scriptedModel([reply('ok')]), middleware: alone.middleware }),
      tools: alone.tools,
      prompt: 'Hello',
    });
    const withApp = await memoryFor('alice');
    const weather = tool({
      description: 'The weather in a city, with the forecast for the next days.',
      inputSchema: z.object({ city: z.string() }),
      execute: async () => 'sunny',
    });
    await generateText({
      model: wrapLanguageModel({ model: scriptedModel([reply('ok')]), middleware: withApp.middleware }),
      tools: { ...withApp.tools, weather },
      system: 'You answer questions about maps. '.repeat(20),
      prompt: 'Hello',
    });

    const [a, b] = [alone.ledger!, withApp.ledger!];
    expect(b.baseTokens).toBeGreaterThan(a.baseTokens + 100);
    expect(b.tools.definitions).toBe(a.tools.definitions + 1);
    expect(b.totalTokens).toBeLessThanOrEqual(b.maxTokens);
    const facts = (l: typeof a) => l.entries.find((e) => e.middleware === 'facts')!.included;
    expect(facts(b)).toBeLessThan(facts(a));
  });

  it('runs Kioku’s tools in the conversation’s scope through a multi-step tool loop', async () => {
    const { stores, memoryFor } = memoryStack();
    const memory = await memoryFor('alice');
    const mock = scriptedModel([
      callTools({ id: 'call_1', name: 'create_memory', input: { title: 'Diet', content: 'Is vegetarian' } }),
      reply('Noted: you are vegetarian.'),
    ]);
    const model = wrapLanguageModel({ model: mock, middleware: memory.middleware });

    const result = await generateText({
      model,
      tools: memory.tools,
      prompt: 'I am vegetarian, remember that.',
      stopWhen: stepCountIs(5),
    });

    expect(result.text).toBe('Noted: you are vegetarian.');
    expect((await stores.facts.list(alice)).map((f) => f.content)).toEqual(['Is vegetarian']);
    expect(await stores.facts.list({ userId: 'bob' })).toEqual([]);
    // The second step got the same memory blocks, the call and its result.
    const second = mock.doGenerateCalls[1]!.prompt;
    expect(systemText(second)).toContain('You are a test agent with memory.');
    expect(second.at(-1)).toMatchObject({
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'call_1' }],
    });
    const transcript = await stores.sessions.transcriptReadLast(alice, memory.conversation.sessionId, 10);
    expect(transcript.map((t) => t.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(transcript[1]!.toolCalls).toEqual([
      { id: 'call_1', name: 'create_memory', arguments: '{"title":"Diet","content":"Is vegetarian"}' },
    ]);
    // The next turn's prompt shows the fact the tool stored.
    const next = scriptedModel([reply('Yes.')]);
    await generateText({
      model: wrapLanguageModel({ model: next, middleware: memory.middleware }),
      tools: memory.tools,
      prompt: 'Do you know what I eat?',
    });
    expect(systemText(next.doGenerateCalls[0]!.prompt)).toContain('Is vegetarian');
  });

  it('answers a bad tool call with Kioku’s coded error, which the model can correct', async () => {
    const { memoryFor } = memoryStack();
    const memory = await memoryFor('alice');
    const mock = scriptedModel([
      callTools({ id: 'call_1', name: 'create_memory', input: { content: 42 } }),
      reply('Sorry.'),
    ]);
    await generateText({
      model: wrapLanguageModel({ model: mock, middleware: memory.middleware }),
      tools: memory.tools,
      prompt: 'Remember 42.',
      stopWhen: stepCountIs(3),
    });
    const output = toolResultText(mock.doGenerateCalls[1]!.prompt.at(-1));
    expect(JSON.parse(output)).toMatchObject({ error: { code: 'VALIDATION' } });
  });

  it('offloads a large output of the app’s own tool and lets the model read it back', async () => {
    const { stores, memoryFor } = memoryStack();
    const memory = await memoryFor('alice');
    const report = page(120);
    const tools = {
      ...memory.tools,
      ...memory.wrapTools({
        fetch_report: tool({
          description: 'Fetch the quarterly report.',
          inputSchema: z.object({ quarter: z.string() }),
          execute: async () => report,
        }),
      }),
    };
    let refId = '';
    const mock = scriptedModel([
      callTools({ id: 'call_1', name: 'fetch_report', input: { quarter: 'Q3' } }),
      // The model reads the id from the placeholder it was given, as a real one would.
      callTools({ id: 'call_2', name: 'retrieve_memory', input: { id: 'set below' } }),
      reply('Revenue is listed by region.'),
    ]);
    const doGenerate = mock.doGenerate.bind(mock);
    mock.doGenerate = async (options) => {
      const ref = parseMemoryRef(toolResultText(options.prompt.at(-1)));
      if (ref) refId = ref.id;
      const result = await doGenerate(options);
      const call = result.content[0];
      if (call?.type === 'tool-call' && call.toolName === 'retrieve_memory')
        call.input = JSON.stringify({ id: refId });
      return result;
    };

    const result = await generateText({
      model: wrapLanguageModel({ model: mock, middleware: memory.middleware }),
      tools,
      prompt: 'What does the Q3 report say?',
      stopWhen: stepCountIs(5),
    });

    expect(result.text).toBe('Revenue is listed by region.');
    const [, fetched, retrieved] = mock.doGenerateCalls.map((c) => toolResultText(c.prompt.at(-1)));
    expect(fetched).toMatch(/^\[MemoryRef: /);
    expect(fetched!.length).toBeLessThan(report.length / 4);
    expect(retrieved).toBe(`[MEMORY_DETAIL ${refId} from tool:fetch_report]\n${report}\n[END_MEMORY_DETAIL]`);
    expect((await stores.details.get(alice, refId))?.content).toBe(report);
    expect(await stores.details.get({ userId: 'bob' }, refId)).toBeNull();
    // The app's step results carry the placeholder too, as the transcript does.
    expect(result.steps[0]!.toolResults[0]!.output).toBe(fetched);
  });

  it('gives a second user nothing of the first one’s memory, even when the model names its records', async () => {
    const { stores, memoryFor } = memoryStack();
    await stores.facts.create(alice, { content: 'Lives in Lisbon' });
    const detail = await stores.details.create(alice, { description: 'secret', content: 'Alice’s salary' });
    const bob = await memoryFor('bob');
    const mock = scriptedModel([
      callTools({ id: 'call_1', name: 'retrieve_memory', input: { id: detail.id } }),
      reply('I cannot find it.'),
    ]);
    await generateText({
      model: wrapLanguageModel({ model: mock, middleware: bob.middleware }),
      tools: bob.tools,
      prompt: 'Where does Alice live, and what is in detail memory?',
      stopWhen: stepCountIs(3),
    });
    expect(systemText(mock.doGenerateCalls[0]!.prompt)).not.toContain('Lisbon');
    const output = toolResultText(mock.doGenerateCalls[1]!.prompt.at(-1));
    expect(JSON.parse(output)).toMatchObject({ error: { code: 'NOT_FOUND' } });
  });

  it('prepares and records a turn once when the AI SDK retries a failed call', async () => {
    const { stores, memoryFor } = memoryStack();
    const memory = await memoryFor('alice');
    const mock = scriptedModel([reply('Hello!')]);
    const doGenerate = mock.doGenerate.bind(mock);
    let failures = 1;
    mock.doGenerate = async (options) => {
      if (failures-- > 0) {
        throw new APICallError({
          message: 'overloaded',
          url: 'http://model',
          requestBodyValues: {},
          statusCode: 503,
          isRetryable: true,
        });
      }
      return doGenerate(options);
    };
    await generateText({
      model: wrapLanguageModel({ model: mock, middleware: memory.middleware }),
      tools: memory.tools,
      prompt: 'Hi',
      maxRetries: 2,
    });
    const transcript = await stores.sessions.transcriptReadLast(alice, memory.conversation.sessionId, 10);
    expect(transcript.map((t) => [t.role, t.content])).toEqual([
      ['user', 'Hi'],
      ['assistant', 'Hello!'],
    ]);
  });

  it('records a turn that stopped at a tool call when the next turn starts', async () => {
    const { stores, memoryFor } = memoryStack();
    const memory = await memoryFor('alice');
    const model = wrapLanguageModel({
      model: scriptedModel([
        callTools({ id: 'call_1', name: 'create_memory', input: { title: 'Games', content: 'Plays chess' } }),
        reply('Hi again.'),
      ]),
      middleware: memory.middleware,
    });
    await generateText({ model, tools: memory.tools, prompt: 'I play chess.', stopWhen: stepCountIs(1) });
    const sessionId = memory.conversation.sessionId;
    expect(await stores.sessions.transcriptReadLast(alice, sessionId, 10)).toEqual([]);
    await generateText({ model, tools: memory.tools, prompt: 'Hello' });
    const transcript = await stores.sessions.transcriptReadLast(alice, sessionId, 10);
    expect(transcript.map((t) => [t.role, t.content])).toEqual([
      ['user', 'I play chess.'],
      ['assistant', ''],
      ['user', 'Hello'],
      ['assistant', 'Hi again.'],
    ]);
  });

  it('passes a call without a user message through untouched', async () => {
    const { memoryFor } = memoryStack();
    const memory = await memoryFor('alice');
    const mock = scriptedModel([reply('ok')]);
    await generateText({
      model: wrapLanguageModel({ model: mock, middleware: memory.middleware }),
      system: 'Say ok.',
      messages: [{ role: 'assistant', content: 'Ready.' }],
    });
    expect(mock.doGenerateCalls[0]!.prompt).toEqual([
      { role: 'system', content: 'Say ok.' },
      { role: 'assistant', content: [{ type: 'text', text: 'Ready.' }] },
    ]);
    expect(memory.ledger).toBeUndefined();
  });
});
