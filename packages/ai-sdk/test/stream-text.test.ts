import { stepCountIs, streamText, wrapLanguageModel } from 'ai';
import { describe, expect, it } from 'vitest';
import { callTools, memoryStack, reply, scriptedModel, systemText } from './support/scripted.js';

const alice = { userId: 'alice' };

describe('the middleware with streamText', () => {
  it('streams the reply unchanged, with memory injected, and records the turn once the stream ends', async () => {
    const { stores, memoryFor } = memoryStack();
    await stores.facts.create(alice, { content: 'Prefers short answers' });
    const memory = await memoryFor('alice');
    const deltas = ['Sure', ', here', ' it is', '.'];
    const mock = scriptedModel([reply(deltas.join(''))], { deltas });
    const model = wrapLanguageModel({ model: mock, middleware: memory.middleware });

    const result = streamText({ model, tools: memory.tools, prompt: 'Summarize it.' });
    const received: string[] = [];
    for await (const delta of result.textStream) received.push(delta);

    expect(received).toEqual(deltas);
    expect(systemText(mock.doStreamCalls[0]!.prompt)).toContain('Prefers short answers');
    expect(memory.ledger!.totalTokens).toBeLessThanOrEqual(memory.ledger!.maxTokens);
    const transcript = await stores.sessions.transcriptReadLast(alice, memory.conversation.sessionId, 10);
    expect(transcript.map((t) => [t.role, t.content])).toEqual([
      ['user', 'Summarize it.'],
      ['assistant', 'Sure, here it is.'],
    ]);
  });

  it('runs a streamed multi-step tool loop in the user’s scope', async () => {
    const { stores, memoryFor } = memoryStack();
    const memory = await memoryFor('alice');
    const mock = scriptedModel([
      callTools({
        id: 'call_1',
        name: 'save_to_working_memory',
        input: { key: 'flight', data: 'LH 1234 on Friday' },
      }),
      reply('Saved your flight.'),
    ]);
    const model = wrapLanguageModel({ model: mock, middleware: memory.middleware });

    const result = streamText({
      model,
      tools: memory.tools,
      prompt: 'Keep my flight number: LH 1234 on Friday.',
      stopWhen: stepCountIs(4),
    });
    expect(await result.text).toBe('Saved your flight.');

    expect(mock.doStreamCalls).toHaveLength(2);
    const transcript = await stores.sessions.transcriptReadLast(alice, memory.conversation.sessionId, 10);
    const { saved } = JSON.parse(transcript[2]!.content) as { saved: string };
    expect((await stores.working.get(alice, saved))?.value).toBe('LH 1234 on Friday');
    expect(await stores.working.get({ userId: 'bob' }, saved)).toBeNull();
    expect(transcript.map((t) => t.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(transcript[1]!.toolCalls?.[0]).toMatchObject({ id: 'call_1', name: 'save_to_working_memory' });
    expect(transcript.at(-1)!.content).toBe('Saved your flight.');
  });
});
