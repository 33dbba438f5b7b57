import { createInMemoryStores, KiokuBuilder } from '@kioku/core';
import { parseMemoryRef } from '@kioku/core/adapter';
import { Agent, type AgentInputItem, type ModelRequest, run, setTracingDisabled, tool } from '@openai/agents';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { kiokuMemory } from '../src/index.js';
import { assistantMessage, functionCall, scriptedModel } from './support/scripted-model.js';

const alice = { userId: 'alice' };

beforeAll(() => setTracingDisabled(true));

function stack(maxTokens = 16_000) {
  const stores = createInMemoryStores();
  const kioku = new KiokuBuilder({ stores, systemPrompt: 'You have a memory.', budget: { maxTokens } })
    .withFacts()
    .withPlanMode()
    .withWorkingMemory()
    .withToolOutputOffload({ thresholdTokens: 60 })
    .build();
  return {
    stores,
    kioku,
    memoryFor: async (userId: string) => kiokuMemory(kioku, await kioku.startConversation({ userId })),
  };
}

const inputOf = (request: ModelRequest | undefined) => (request?.input ?? []) as AgentInputItem[];

/** The text of the function call result for `callId` in a request's input. */
function resultText(request: ModelRequest | undefined, callId: string): string {
  const item = inputOf(request).find(
    (i) =>
      (i as { type?: string; callId?: string }).type === 'function_call_result' &&
      (i as { callId?: string }).callId === callId,
  ) as { output: string | { text: string } } | undefined;
  if (!item) return '';
  return typeof item.output === 'string' ? item.output : item.output.text;
}

const page = (lines: number) =>
  Array.from({ length: lines }, (_, i) => `Line ${i}: the quarterly report lists revenue by region.`).join(
    '\n',
  );

describe('Kioku in an Agents SDK run', () => {
  it('appends memory to the instructions within the budget, keeps the items and records the turn', async () => {
    const { stores, memoryFor } = stack();
    await stores.facts.create(alice, { content: 'Lives in Lisbon' });
    const memory = await memoryFor('alice');
    const { model, requests } = await scriptedModel([[assistantMessage('You live in Lisbon.')]]);
    const agent = new Agent({
      name: 'Assistant',
      instructions: 'Answer briefly.',
      model,
      tools: memory.tools,
    });

    const result = await run(agent, 'Where do I live?', {
      session: memory.session,
      callModelInputFilter: memory.inputFilter,
    });

    expect(result.finalOutput).toBe('You live in Lisbon.');
    const instructions = requests()[0]!.systemInstructions ?? '';
    expect(instructions.startsWith('Answer briefly.\n\nYou have a memory.')).toBe(true);
    expect(instructions).toMatch(/\[DYNAMIC_MEMORY\][\s\S]*Lives in Lisbon/);
    const names = requests()[0]!.tools.map((t) => (t as { name: string }).name);
    expect(names).toEqual(expect.arrayContaining(['create_memory', 'retrieve_memory', 'update_plan_step']));

    const ledger = memory.ledger!;
    expect(ledger.totalTokens).toBeLessThanOrEqual(ledger.maxTokens);
    expect(ledger.entries.find((e) => e.middleware === 'facts')).toMatchObject({ included: 1 });
    // The instructions were paid for first.
    expect(ledger.baseTokens).toBeGreaterThan(0);

    const items = await memory.session.getItems();
    expect(items).toEqual([
      expect.objectContaining({ role: 'user', content: 'Where do I live?' }),
      expect.objectContaining({ role: 'assistant' }),
    ]);
    const transcript = await stores.sessions.transcriptReadLast(alice, memory.conversation.sessionId, 10);
    expect(transcript.map((t) => [t.role, t.content])).toEqual([
      ['user', 'Where do I live?'],
      ['assistant', 'You live in Lisbon.'],
    ]);
  });

  it('runs Kioku’s tools in the user’s scope in a tool loop, then replays the session next turn', async () => {
    const { stores, memoryFor } = stack();
    const memory = await memoryFor('alice');
    const { model, requests } = await scriptedModel([
      [functionCall('create_memory', { title: 'Diet', content: 'Is vegetarian' }, 'call_1')],
      [assistantMessage('Noted.')],
      [assistantMessage('You are vegetarian.')],
    ]);
    const agent = new Agent({ name: 'Assistant', instructions: 'Be helpful.', model, tools: memory.tools });
    const options = { session: memory.session, callModelInputFilter: memory.inputFilter };

    await run(agent, 'I am vegetarian.', options);
    expect((await stores.facts.list(alice)).map((f) => f.content)).toEqual(['Is vegetarian']);
    expect(await stores.facts.list({ userId: 'bob' })).toEqual([]);
    // The second call of the turn saw the same memory and the tool's result.
    expect(requests()[1]!.systemInstructions).toBe(requests()[0]!.systemInstructions);
    expect(resultText(requests()[1], 'call_1')).toMatch(/^Created memory/);

    const second = await run(agent, 'What do I eat?', options);
    expect(second.finalOutput).toBe('You are vegetarian.');
    const third = requests()[2]!;
    expect(third.systemInstructions).toContain('Is vegetarian');
    // The session replayed the first turn's items before the new message.
    const replayed = inputOf(third).map((i) => {
      const { type, role } = i as { type?: string; role?: string };
      return type === undefined || type === 'message' ? role : type;
    });
    expect(replayed).toEqual(['user', 'function_call', 'function_call_result', 'assistant', 'user']);

    const transcript = await stores.sessions.transcriptReadLast(alice, memory.conversation.sessionId, 20);
    expect(transcript.map((t) => t.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
      'assistant',
    ]);
  });

  it('offloads a large output of the agent’s own tool and lets the model read it back', async () => {
    const { stores, memoryFor } = stack();
    const memory = await memoryFor('alice');
    const report = page(120);
    const fetchReport = tool({
      name: 'fetch_report',
      description: 'Fetch a quarterly report.',
      parameters: z.object({ quarter: z.string() }),
      execute: async () => report,
    });
    let refId = '';
    const { model, requests } = await scriptedModel([
      [functionCall('fetch_report', { quarter: 'Q3' }, 'call_1')],
      (request) => {
        refId = parseMemoryRef(resultText(request, 'call_1'))?.id ?? 'missing';
        return [functionCall('retrieve_memory', { id: refId }, 'call_2')];
      },
      [assistantMessage('Revenue is listed by region.')],
    ]);
    const agent = new Agent({
      name: 'Analyst',
      instructions: 'Read reports.',
      model,
      tools: [...memory.tools, ...memory.wrapTools([fetchReport])],
    });

    const result = await run(agent, 'What does the Q3 report say?', {
      session: memory.session,
      callModelInputFilter: memory.inputFilter,
    });

    expect(result.finalOutput).toBe('Revenue is listed by region.');
    const placeholder = resultText(requests()[1], 'call_1');
    expect(placeholder).toMatch(/^\[MemoryRef: /);
    expect(placeholder.length).toBeLessThan(report.length / 4);
    expect(resultText(requests()[2], 'call_2')).toBe(
      `[MEMORY_DETAIL ${refId} from tool:fetch_report]\n${report}\n[END_MEMORY_DETAIL]`,
    );
    expect((await stores.details.get(alice, refId))?.content).toBe(report);
    expect(await stores.details.get({ userId: 'bob' }, refId)).toBeNull();
  });

  it('gives a second user nothing of the first one’s memory, even when the model names its records', async () => {
    const { stores, memoryFor } = stack();
    await stores.facts.create(alice, { content: 'Lives in Lisbon' });
    const detail = await stores.details.create(alice, { description: 'secret', content: 'Alice’s salary' });
    const bob = await memoryFor('bob');
    const { model, requests } = await scriptedModel([
      [functionCall('retrieve_memory', { id: detail.id }, 'call_1')],
      [assistantMessage('Nothing found.')],
    ]);
    const agent = new Agent({ name: 'Assistant', instructions: 'Help.', model, tools: bob.tools });
    await run(agent, 'What is in memory?', { session: bob.session, callModelInputFilter: bob.inputFilter });
    expect(requests()[0]!.systemInstructions).not.toContain('Lisbon');
    expect(JSON.parse(resultText(requests()[1], 'call_1'))).toMatchObject({ error: { code: 'NOT_FOUND' } });
  });

  it('keeps the memory on every call of a turn whose history the server keeps', async () => {
    const { stores, memoryFor } = stack();
    await stores.facts.create(alice, { content: 'Lives in Lisbon' });
    const memory = await memoryFor('alice');
    const { model, requests } = await scriptedModel([
      [functionCall('list_working_memory', {}, 'call_1')],
      [assistantMessage('Nothing noted.')],
    ]);
    const agent = new Agent({ name: 'Assistant', instructions: 'Help.', model, tools: memory.tools });
    await run(agent, 'What did I note?', {
      previousResponseId: 'resp_earlier',
      callModelInputFilter: memory.inputFilter,
    });
    // The second call carries only the tool result (the server has the rest), and still the memory.
    expect(inputOf(requests()[1]).some((i) => (i as { role?: string }).role === 'user')).toBe(false);
    expect(requests()[1]!.systemInstructions).toContain('Lives in Lisbon');
  });

  it('streams the answer unchanged and records the turn once the run completes', async () => {
    const { stores, memoryFor } = stack();
    await stores.facts.create(alice, { content: 'Prefers short answers' });
    const memory = await memoryFor('alice');
    const { model, requests } = await scriptedModel([[assistantMessage('Short and sweet.')]]);
    const agent = new Agent({ name: 'Assistant', instructions: 'Help.', model, tools: memory.tools });

    const stream = await run(agent, 'Summarize.', {
      stream: true,
      session: memory.session,
      callModelInputFilter: memory.inputFilter,
    });
    let text = '';
    for await (const delta of stream.toTextStream()) text += delta;
    await stream.completed;

    expect(text).toBe('Short and sweet.');
    expect(requests()[0]!.systemInstructions).toContain('Prefers short answers');
    const transcript = await stores.sessions.transcriptReadLast(alice, memory.conversation.sessionId, 10);
    expect(transcript.map((t) => [t.role, t.content])).toEqual([
      ['user', 'Summarize.'],
      ['assistant', 'Short and sweet.'],
    ]);
  });

  it('makes the instructions, the replayed items and the agent’s own tools pay from the same budget', async () => {
    const { stores, memoryFor } = stack(1_900);
    for (let i = 0; i < 40; i++) {
      await stores.facts.create(alice, { content: `Fact ${i}: the user owns a collection of maps` });
    }
    const weather = tool({
      name: 'weather',
      description: 'The weather in a city, with the forecast for the next days.',
      parameters: z.object({ city: z.string() }),
      execute: async () => 'sunny',
    });
    const ledgers = [];
    for (const [instructions, tools] of [
      ['Help.', []],
      ['You answer questions about maps. '.repeat(20), [weather]],
    ] as const) {
      const memory = await memoryFor('alice');
      const { model } = await scriptedModel([[assistantMessage('ok')]]);
      const agent = new Agent({ name: 'A', instructions, model, tools: [...memory.tools, ...tools] });
      await run(agent, 'Hello', { session: memory.session, callModelInputFilter: memory.inputFilter });
      ledgers.push(memory.ledger!);
    }
    const [a, b] = ledgers as [NonNullable<(typeof ledgers)[0]>, NonNullable<(typeof ledgers)[0]>];
    expect(b.baseTokens).toBeGreaterThan(a.baseTokens + 100);
    expect(b.tools.definitions).toBe(a.tools.definitions + 1);
    expect(b.totalTokens).toBeLessThanOrEqual(b.maxTokens);
    const facts = (l: typeof a) => l.entries.find((e) => e.middleware === 'facts')!.included;
    expect(facts(b)).toBeLessThan(facts(a));
  });
});
