import { KiokuBuilder } from '@kioku/core';
import { Agent } from '@mastra/core/agent';
import { MockLanguageModelV3, simulateReadableStream } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KiokuMastraMemory } from '../src/index.js';
import { BACKENDS, type Backend } from './backends.js';

/*
 * A Mastra Agent whose memory is Kioku, with the AI SDK's mock model, across two resources (users). The
 * model's requests are what the test reads.
 */

type StreamResult = Awaited<ReturnType<MockLanguageModelV3['doStream']>>;
type StreamPart = StreamResult['stream'] extends ReadableStream<infer P> ? P : never;
const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/** The AI SDK's mock model answering each call with the next text of the script, streamed or not. */
function scriptedModel(script: string[]) {
  const replies = [...script];
  const next = () => {
    const text = replies.shift();
    if (text === undefined) throw new Error('model script exhausted');
    return text;
  };
  return new MockLanguageModelV3({
    doGenerate: async () => ({
      content: [{ type: 'text', text: next() }],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage,
      warnings: [],
    }),
    doStream: async () => {
      const text = next();
      const chunks: StreamPart[] = [
        { type: 'stream-start', warnings: [] },
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: text },
        { type: 'text-end', id: 't' },
        { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
      ];
      return { stream: simulateReadableStream<StreamPart>({ chunks }) };
    },
  });
}

/** Every request the model got, as one string each. */
function requests(model: MockLanguageModelV3): string[] {
  return [...model.doGenerateCalls, ...model.doStreamCalls].map((call) => JSON.stringify(call.prompt));
}

describe.each(['memory', 'postgres'])(
  'a Mastra Agent with Kioku memory on %s, two resources',
  (backendName) => {
    let backend: Backend;
    beforeAll(async () => {
      backend = await BACKENDS[backendName]!();
    });
    afterAll(async () => {
      await backend?.destroy();
    });

    it("recalls a resource's memories in its next thread, never in another's, and forgets them", async () => {
      const kioku = new KiokuBuilder({ stores: backend.stores, systemPrompt: 'You have a memory.' })
        .withFacts({ mode: 'relevant' }) // each exchange kept as an episodic memory, recalled when relevant
        .withConversationHistory() // the thread's earlier turns
        .build();
      const memory = new KiokuMastraMemory({ kioku });
      const model = scriptedModel([
        'Noted: you live in Lisbon and keep bees.',
        'Lisbon is lovely in spring.',
        'You live in Lisbon.',
        'I do not know where you live.',
        'I do not know where you live.',
      ]);
      const agent = new Agent({
        id: 'assistant',
        name: 'Assistant',
        instructions: 'Answer briefly.',
        model,
        memory,
      });
      const ask = (text: string, resource: string, thread: string) =>
        agent.generate(text, { memory: { resource, thread } });

      const first = await ask('I live in Lisbon and I keep bees.', 'alice', 'alice-1');
      expect(first.text).toBe('Noted: you live in Lisbon and keep bees.');
      const second = await ask('Is it nice there?', 'alice', 'alice-1');
      // the thread's history comes from Kioku's transcript, and is not part of the answer
      expect(requests(model)[1]).toContain('I live in Lisbon and I keep bees.');
      expect(second.text).toBe('Lisbon is lovely in spring.');

      await ask('Where do I live?', 'alice', 'alice-2');
      expect(requests(model)[2]).toContain('Lisbon'); // recalled from her first thread
      const ledger = await memory.ledger('alice', 'alice-2');
      expect(ledger?.entries.reduce((n, e) => n + e.included, 0)).toBeGreaterThan(0);
      expect(
        (await memory.listThreads({ filter: { resourceId: 'alice' } })).threads.map((t) => t.id).sort(),
      ).toEqual(['alice-1', 'alice-2']);
      const recalled = await memory.recall({ threadId: 'alice-1', resourceId: 'alice' });
      expect(recalled.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);

      // Another resource cannot take over alice's thread: Mastra checks the thread's owner, which Kioku keeps.
      await expect(ask('What did I say?', 'bob', 'alice-1')).rejects.toThrow(/alice/);
      await ask('Where do I live?', 'bob', 'bob-1');
      expect(requests(model)[3]).not.toMatch(/Lisbon|bees/);

      const receipt = await memory.forgetResource('alice');
      expect(receipt.total).toBeGreaterThan(0);
      expect((await memory.listThreads({ filter: { resourceId: 'alice' } })).threads).toEqual([]);
      expect(await memory.getThreadById({ threadId: 'alice-1' })).toBeNull();
      expect((await memory.recall({ threadId: 'alice-1', resourceId: 'alice' })).messages).toEqual([]);
      expect(await backend.stores.facts.list({ userId: 'alice' })).toEqual([]);
      await ask('Where do I live?', 'alice', 'alice-3');
      expect(requests(model)[4]).not.toMatch(/Lisbon|bees/);
    });
  },
);
