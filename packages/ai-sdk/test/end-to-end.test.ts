import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { MEMORY_NOTICE } from '@kioku/core/model';
import { sse, startScriptedServer, text, toolCalls } from '@kioku/openai-test-server';
import { generateText, stepCountIs, streamText, tool, wrapLanguageModel } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { memoryStack, page } from './support/scripted.js';

interface SentMessage {
  role: string;
  content: string | null;
  tool_call_id?: string;
}

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

describe('end to end against an OpenAI-compatible server', () => {
  it('sends memory within the budget, runs tools in scope, offloads, and streams the next turn', async () => {
    const report = page(120);
    const server = await startScriptedServer([
      toolCalls(
        { id: 'call_1', name: 'create_memory', arguments: { title: 'Diet', content: 'Is vegetarian' } },
        { id: 'call_2', name: 'fetch_report', arguments: { quarter: 'Q3' } },
      ),
      // The model reads the placeholder's id back, as a real model would.
      (res, body, req) => {
        const sent = body.messages as SentMessage[];
        const placeholder = sent.find((m) => m.tool_call_id === 'call_2')?.content ?? '';
        const id = /\[MemoryRef: (\S+) /.exec(placeholder)?.[1] ?? 'missing';
        toolCalls({ id: 'call_3', name: 'retrieve_memory', arguments: { id } })(res, body, req);
      },
      text('Noted, and the report lists revenue by region.'),
      sse([{ content: 'You are ' }, { content: 'vegetarian.' }], { finishReason: 'stop' }),
    ]);
    close = server.close;
    const provider = createOpenAICompatible({ name: 'scripted', baseURL: server.baseURL, apiKey: 'test' });
    const { stores, memoryFor } = memoryStack();
    const memory = await memoryFor('alice');
    const model = wrapLanguageModel({
      model: provider.chatModel('test-model'),
      middleware: memory.middleware,
    });
    const tools = {
      ...memory.tools,
      ...memory.wrapTools({
        fetch_report: tool({
          description: 'Fetch a quarterly report.',
          inputSchema: z.object({ quarter: z.string() }),
          execute: async () => report,
        }),
      }),
    };

    const first = await generateText({
      model,
      tools,
      prompt: 'I am vegetarian. And what does the Q3 report say?',
      stopWhen: stepCountIs(5),
    });
    expect(first.text).toBe('Noted, and the report lists revenue by region.');

    const second = streamText({ model, tools, prompt: 'What do I eat?' });
    const deltas: string[] = [];
    for await (const delta of second.textStream) deltas.push(delta);
    expect(deltas).toEqual(['You are ', 'vegetarian.']);

    const bodies = server.received.map((r) => r.body);
    const sent = (i: number) => bodies[i]!.messages as SentMessage[];
    // Kioku's tools and the app's went out with every request; memory came after the system prompt.
    const names = (bodies[0]!.tools as { function: { name: string } }[]).map((t) => t.function.name);
    expect(names).toEqual(expect.arrayContaining(['create_memory', 'retrieve_memory', 'fetch_report']));
    expect(sent(0)[0]).toMatchObject({
      role: 'system',
      content: `You are a test agent with memory.\n\n${MEMORY_NOTICE}`,
    });
    // The report reached the model as a placeholder, and in full through retrieve_memory.
    const placeholder = sent(1).find((m) => m.tool_call_id === 'call_2')!.content!;
    expect(placeholder).toMatch(/^\[MemoryRef: /);
    expect(sent(2).find((m) => m.tool_call_id === 'call_3')!.content).toMatch(
      /^\[MEMORY_DETAIL \w+ from tool:fetch_report\]\n[\s\S]*\n\[END_MEMORY_DETAIL\]$/,
    );
    expect(sent(2).find((m) => m.tool_call_id === 'call_3')!.content).toContain(report);
    // The next turn's prompt shows the fact the first turn stored, for alice only.
    expect(
      sent(3)
        .filter((m) => m.role === 'system')
        .map((m) => m.content)
        .join('\n'),
    ).toContain('Is vegetarian');
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
      'tool',
      'assistant',
      'tool',
      'assistant',
      'user',
      'assistant',
    ]);
    expect(transcript.at(-1)!.content).toBe('You are vegetarian.');
  });
});
