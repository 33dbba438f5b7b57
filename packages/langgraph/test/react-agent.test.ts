import { KiokuBuilder, type KiokuStores } from '@kioku/core';
import { tool } from '@langchain/core/tools';
import { getStore, MemorySaver } from '@langchain/langgraph';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { KiokuGraphMemory, KiokuStore } from '../src/index.js';
import { BACKENDS, type Backend } from './backends.js';
import { callTool, ScriptedChatModel, say } from './support/scripted-chat-model.js';

/*
 * A LangGraph createReactAgent with Kioku underneath — the store (`store`), the prompt (`prompt`), the
 * recording of each turn (`postModelHook`) and Kioku's memory tools — across two users. The model is
 * scripted; its requests are what the test reads.
 */

function agentFor(stores: KiokuStores, model: ScriptedChatModel) {
  const kioku = new KiokuBuilder({ stores, systemPrompt: 'You are a helpful assistant with a memory.' })
    .withFacts()
    .build();
  const memory = new KiokuGraphMemory({ kioku });
  // The store of each run is bound to the run's user (see `run`): LangGraph calls a graph's store from
  // its own batching loop, outside the run's config.
  const store = new KiokuStore({ stores, source: 'user' });
  // The LangGraph way of writing long-term memory from a tool: the graph's store, namespaced.
  const rememberPet = tool(
    async ({ pet }) => {
      await getStore()!.put(['memories', 'pets'], 'pet', { text: pet });
      return 'saved';
    },
    { name: 'remember_pet', description: 'Remember the user’s pet.', schema: z.object({ pet: z.string() }) },
  );
  const agent = createReactAgent({
    llm: model,
    tools: [...memory.tools, rememberPet],
    prompt: memory.prompt,
    postModelHook: memory.record,
    checkpointer: new MemorySaver(),
  });
  return { kioku, store, agent };
}

function run(built: ReturnType<typeof agentFor>, userId: string, threadId: string, text: string) {
  return built.agent.invoke(
    { messages: [{ role: 'user', content: text }] },
    { configurable: { user_id: userId, thread_id: threadId }, store: built.store.forUser(userId) },
  );
}

describe.each(['memory', 'postgres'])('createReactAgent with Kioku on %s, two users', (backendName) => {
  let backend: Backend;
  beforeAll(async () => {
    backend = await BACKENDS[backendName]!();
  });
  afterAll(async () => {
    await backend?.destroy();
  });

  it("recalls a user's facts in their next thread, never in another user's, and forgets them", async () => {
    const model = new ScriptedChatModel([
      // alice, thread 1: two facts, one through Kioku's memory tool, one through the graph's store
      callTool('create_memory', { title: 'Home', content: 'Lives in Lisbon and keeps bees' }, 'call_1'),
      callTool('remember_pet', { pet: 'A cat called Miso' }, 'call_2'),
      say('Noted: Lisbon, bees and Miso.'),
      // alice, thread 2
      say('You live in Lisbon and your cat is Miso.'),
      // bob, thread 1
      say('I do not know where you live.'),
      // alice, after her erasure
      say('I do not know.'),
    ]);
    const built = agentFor(backend.stores, model);
    const { kioku, store } = built;

    const first = await run(built, 'alice', 'alice-1', 'I live in Lisbon, I keep bees, and my cat is Miso.');
    expect(first.messages.at(-1)?.content).toBe('Noted: Lisbon, bees and Miso.');
    // The turn is recorded in alice's Kioku session for her thread, tool calls included.
    const aliceSessions = await backend.stores.sessions.list({ userId: 'alice' });
    expect(aliceSessions).toHaveLength(1);
    const transcript = await backend.stores.sessions.transcriptReadLast(
      { userId: 'alice' },
      aliceSessions[0]!.id,
      20,
    );
    expect(transcript.map((entry) => entry.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
    ]);

    await run(built, 'alice', 'alice-2', 'Where do I live?');
    const aliceNext = model.requestTexts()[3]!;
    expect(aliceNext).toContain('Lives in Lisbon and keeps bees');
    expect(aliceNext).toContain('A cat called Miso');
    expect(aliceNext).not.toContain('I live in Lisbon, I keep bees'); // a new thread: memory, not replay

    await run(built, 'bob', 'bob-1', 'Where do I live?');
    const bobs = model.requestTexts()[4]!;
    expect(bobs).not.toMatch(/Lisbon|bees|Miso/);
    expect(await store.forUser('bob').search([], { limit: 100 })).toEqual([]);

    const receipt = await kioku.privacy.forgetUser('alice');
    expect(receipt.total).toBeGreaterThan(0);
    const alice = store.forUser('alice');
    expect(await alice.search([], { limit: 100 })).toEqual([]);
    expect(await alice.search(['memories'], { query: 'cat Miso' })).toEqual([]);
    expect(await alice.get(['memories', 'pets'], 'pet')).toBeNull();
    expect(await alice.listNamespaces()).toEqual([]);
    expect(await backend.stores.sessions.list({ userId: 'alice' })).toEqual([]);
    await run(built, 'alice', 'alice-3', 'Where do I live?');
    expect(model.requestTexts()[5]).not.toMatch(/Lisbon|bees|Miso/);
  });
});
