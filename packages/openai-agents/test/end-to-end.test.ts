import { createInMemoryStores, KiokuBuilder } from '@kioku/core';
import { sse, startScriptedServer, text, toolCalls } from '@kioku/openai-test-server';
import { Agent, OpenAIProvider, Runner, setTracingDisabled } from '@openai/agents';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { kiokuMemory } from '../src/index.js';

interface SentMessage {
  role: string;
  content: string | null;
  tool_call_id?: string;
}

beforeAll(() => setTracingDisabled(true));

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

describe('end to end against an OpenAI-compatible server', () => {
  it('sends memory in the instructions, runs Kioku’s tools in scope, replays the session and streams', async () => {
    const server = await startScriptedServer([
      toolCalls({
        id: 'call_1',
        name: 'create_memory',
        arguments: { title: 'Diet', content: 'Is vegetarian' },
      }),
      text('Noted.'),
      sse([{ content: 'You are ' }, { content: 'vegetarian.' }], { finishReason: 'stop' }),
    ]);
    close = server.close;
    const stores = createInMemoryStores();
    const kioku = new KiokuBuilder({ stores, systemPrompt: 'You have a memory.' })
      .withFacts()
      .withToolOutputOffload()
      .build();
    const memory = kiokuMemory(kioku, await kioku.startConversation({ userId: 'alice' }));
    const provider = new OpenAIProvider({ apiKey: 'test', baseURL: server.baseURL, useResponses: false });
    const runner = new Runner({ modelProvider: provider, model: 'test-model' });
    const agent = new Agent({ name: 'Assistant', instructions: 'Be brief.', tools: memory.tools });
    const options = { session: memory.session, callModelInputFilter: memory.inputFilter };

    const first = await runner.run(agent, 'I am vegetarian.', options);
    expect(first.finalOutput).toBe('Noted.');
    const stream = await runner.run(agent, 'What do I eat?', { ...options, stream: true });
    let streamed = '';
    for await (const delta of stream.toTextStream()) streamed += delta;
    await stream.completed;
    expect(streamed).toBe('You are vegetarian.');

    const sent = server.received.map((r) => r.body.messages as SentMessage[]);
    expect(sent[0]![0]).toMatchObject({ role: 'system' });
    expect(sent[0]![0]!.content).toMatch(/^Be brief\.\n\nYou have a memory\./);
    const names = (server.received[0]!.body.tools as { function: { name: string } }[]).map(
      (t) => t.function.name,
    );
    expect(names).toEqual(expect.arrayContaining(['create_memory', 'retrieve_memory']));
    expect(sent[1]!.find((m) => m.tool_call_id === 'call_1')?.content).toMatch(/^Created memory/);
    // The second turn: the stored fact in the instructions, the first turn replayed from the session.
    expect(sent[2]![0]!.content).toContain('Is vegetarian');
    expect(sent[2]!.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user']);
    expect(await stores.facts.list({ userId: 'bob' })).toEqual([]);
    expect(memory.ledger!.totalTokens).toBeLessThanOrEqual(memory.ledger!.maxTokens);

    const transcript = await stores.sessions.transcriptReadLast(
      { userId: 'alice' },
      memory.conversation.sessionId,
      20,
    );
    expect(transcript.map((t) => t.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
      'assistant',
    ]);
    expect(transcript.at(-1)!.content).toBe('You are vegetarian.');
  });
});
