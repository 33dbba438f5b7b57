/**
 * The memory turn of a chat agent, for benchmarks that compare memories per turn: the same users, facts
 * and messages for every side; a turn recalls context for the user's message, then records the exchange.
 * A side is one memory wired the way its framework documents it (`MemoryTurnSide`), on PostgreSQL at the
 * URL it is given, in a schema of its own. `bench:frameworks` runs them; issue 40's Kioku-vs-Mastra
 * comparison can reuse `kiokuPrepareRecordSide` and `mastraAgentSide`.
 */
import { KiokuBuilder } from '@kioku/core';
import { KiokuStore } from '@kioku/langgraph';
import { KiokuMastraMemory } from '@kioku/mastra';
import { createPostgresStores, type PostgresStores } from '@kioku/store-postgres';
import { PostgresStore as LangGraphPostgresStore } from '@langchain/langgraph-checkpoint-postgres/store';
import { Agent } from '@mastra/core/agent';
import { Memory } from '@mastra/memory';
import { PostgresStore as MastraPostgresStore } from '@mastra/pg';
import { MockLanguageModelV3, simulateReadableStream } from 'ai/test';
import { seededRandom } from './util.js';

export interface MemoryTurn {
  userId: string;
  threadId: string;
  message: string;
  answer: string;
}

export interface MemoryTurnSide {
  name: string;
  turn(t: MemoryTurn): Promise<void>;
  close(): Promise<void>;
}

const PLACES = ['Lisbon', 'Osaka', 'Tallinn', 'Montreal', 'Cusco', 'Dakar', 'Hobart', 'Bergen'];
const PETS = ['a beagle', 'two cats', 'a parrot', 'bees', 'a tortoise', 'goldfish'];
const FOODS = ['peanuts', 'shellfish', 'gluten', 'kiwi', 'sesame', 'lactose'];
const HOBBIES = ['chess openings', 'jazz records', 'sourdough bread', 'vintage cameras', 'trail running'];

/**
 * `turns` turns for each of `users` users, in rounds (every user's first turn, then every user's second …):
 * the first half of a user's turns state facts in one thread, the rest ask about them in a second thread.
 */
export function memoryTurnWorkload(options: { users: number; turns: number; prefix?: string }): MemoryTurn[] {
  const random = seededRandom(40);
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
  const perUser = Array.from({ length: options.users }, (_, u) => {
    const userId = `${options.prefix ?? 'user'}-${u}`;
    const place = pick(PLACES);
    const pet = pick(PETS);
    const food = pick(FOODS);
    const hobby = pick(HOBBIES);
    const facts = [
      [`I live in ${place} and I work from home.`, `Noted: you live in ${place}.`],
      [`I keep ${pet} in the garden.`, `Noted: you keep ${pet}.`],
      [`I am allergic to ${food}, please remember that.`, `I will remember your ${food} allergy.`],
      [`On weekends I am into ${hobby}.`, `Nice, ${hobby} it is.`],
    ];
    const questions = [
      ['Where do I live again?', `You live in ${place}.`],
      ['What animals do I keep?', `You keep ${pet}.`],
      ['Can you suggest a dinner that suits my allergy?', `Anything without ${food}.`],
      ['What do I do on weekends?', `You are into ${hobby}.`],
    ];
    const half = Math.ceil(options.turns / 2);
    return Array.from({ length: options.turns }, (_, i): MemoryTurn => {
      const [message, answer] =
        i < half ? facts[i % facts.length]! : questions[(i - half) % questions.length]!;
      return { userId, threadId: `${userId}-${i < half ? 1 : 2}`, message: message!, answer: answer! };
    });
  });
  return Array.from({ length: options.turns }, (_, i) => perUser.map((turns) => turns[i]!)).flat();
}

type StreamResult = Awaited<ReturnType<MockLanguageModelV3['doStream']>>;
type StreamPart = StreamResult['stream'] extends ReadableStream<infer P> ? P : never;
const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/** The AI SDK's mock model answering with whatever `answer` holds: no model time in the turn. */
function cannedModel(answer: { text: string }) {
  return new MockLanguageModelV3({
    doGenerate: async () => ({
      content: [{ type: 'text', text: answer.text }],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage,
      warnings: [],
    }),
    doStream: async () => {
      const chunks: StreamPart[] = [
        { type: 'stream-start', warnings: [] },
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: answer.text },
        { type: 'text-end', id: 't' },
        { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
      ];
      return { stream: simulateReadableStream<StreamPart>({ chunks }) };
    },
  });
}

/** Kioku's stores on PostgreSQL in `schema`, set up. */
async function kiokuStores(url: string, schema: string): Promise<PostgresStores> {
  const stores = createPostgresStores({ url, schema });
  await stores.setup();
  return stores;
}

/**
 * The Kioku a chat agent would use, matching Mastra Memory's settings below: the thread's last 5 turns
 * (Mastra's `lastMessages: 10`), working memory, and each exchange kept as an episodic memory recalled
 * lexically when relevant (in place of Mastra's embedding-based semantic recall).
 */
function chatKioku(stores: PostgresStores) {
  return new KiokuBuilder({ stores, systemPrompt: 'You have a memory.' })
    .withFacts({ mode: 'relevant' })
    .withConversationHistory({ maxTurns: 5 })
    .withWorkingMemory()
    .build();
}

/** Mastra Memory's settings: the thread's last 10 messages and resource-scoped working memory. */
export const MASTRA_MEMORY_OPTIONS = {
  lastMessages: 10,
  workingMemory: { enabled: true, scope: 'resource' as const },
  // Semantic recall needs an embedder and a vector store (PgVector: the `vector` extension); off here.
  semanticRecall: false,
};

/**
 * A Mastra `Agent` with the mock model: `memory` `none` (the agent's own cost, a baseline), `mastra`
 * (`@mastra/memory`'s Memory on `@mastra/pg`'s PostgresStore) or `kioku` (`@kioku/mastra` on
 * `@kioku/store-postgres`). A turn is one `agent.generate(message, { memory: { resource, thread } })`.
 */
export async function mastraAgentSide(
  memory: 'none' | 'mastra' | 'kioku',
  url: string,
  schema: string,
): Promise<MemoryTurnSide> {
  const answer = { text: '' };
  const model = cannedModel(answer);
  let close = async () => {};
  let agentMemory: Memory | KiokuMastraMemory | undefined;
  if (memory === 'mastra') {
    const storage = new MastraPostgresStore({
      id: schema,
      connectionString: url,
      schemaName: schema,
      max: 4,
    });
    await storage.init();
    agentMemory = new Memory({ storage, options: MASTRA_MEMORY_OPTIONS });
    close = () => storage.close();
  } else if (memory === 'kioku') {
    const stores = await kiokuStores(url, schema);
    agentMemory = new KiokuMastraMemory({ kioku: chatKioku(stores) });
    close = () => stores.close();
  }
  const agent = new Agent({
    id: `bench-${memory}`,
    name: 'Assistant',
    instructions: 'Answer briefly.',
    model,
    ...(agentMemory ? { memory: agentMemory } : {}),
  });
  return {
    name: memory,
    async turn(t) {
      answer.text = t.answer;
      model.doGenerateCalls.length = 0;
      model.doStreamCalls.length = 0;
      const result = await agent.generate(
        t.message,
        agentMemory ? { memory: { resource: t.userId, thread: t.threadId } } : {},
      );
      if (result.text !== t.answer) throw new Error(`${memory}: unexpected answer: ${result.text}`);
    },
    close,
  };
}

/** Kioku's own turn, no framework: `conversation.prepare(message)`, then `record` of the exchange. */
export async function kiokuPrepareRecordSide(url: string, schema: string): Promise<MemoryTurnSide> {
  const stores = await kiokuStores(url, schema);
  const kioku = chatKioku(stores);
  const conversations = new Map<string, ReturnType<typeof kioku.startConversation>>();
  return {
    name: 'kioku prepare+record',
    async turn(t) {
      let conversation = conversations.get(t.threadId);
      if (!conversation) {
        conversation = kioku.startConversation({ userId: t.userId });
        conversations.set(t.threadId, conversation);
      }
      const c = await conversation;
      await c.prepare(t.message);
      await c.record([
        { role: 'user', content: t.message },
        { role: 'assistant', content: t.answer },
      ]);
    },
    close: () => stores.close(),
  };
}

/**
 * LangGraph's long-term memory turn on a `BaseStore`, as its docs wire it: search the user's memories
 * namespace with the message, then put the exchange. `langgraph`: LangGraph's PostgresStore, the user in
 * the namespace; `kioku`: KiokuStore on store-postgres, the user as Kioku's scope (`forUser`).
 */
export async function langgraphStoreSide(
  store: 'langgraph' | 'kioku',
  url: string,
  schema: string,
): Promise<MemoryTurnSide> {
  let n = 0;
  if (store === 'langgraph') {
    const pg = LangGraphPostgresStore.fromConnString(url, { schema });
    await pg.setup();
    return {
      name: 'PostgresStore',
      async turn(t) {
        await pg.search(['memories', t.userId], { query: t.message, limit: 5 });
        await pg.put(['memories', t.userId], `t${n++}`, { text: `${t.message}\n${t.answer}` });
      },
      close: () => pg.stop(),
    };
  }
  const stores = await kiokuStores(url, schema);
  const base = new KiokuStore({ stores, source: 'user' });
  const users = new Map<string, KiokuStore>();
  return {
    name: 'KiokuStore',
    async turn(t) {
      const kioku = users.get(t.userId) ?? base.forUser(t.userId);
      users.set(t.userId, kioku);
      await kioku.search(['memories'], { query: t.message, limit: 5 });
      await kioku.put(['memories'], `t${n++}`, { text: `${t.message}\n${t.answer}` });
    },
    close: () => stores.close(),
  };
}
