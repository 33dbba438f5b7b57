import { describe, expect, it } from 'vitest';
import {
  type ChatMessage,
  type ChatModel,
  defaultTokenizer,
  KiokuBuilder,
  knowledgeDocuments,
  type PreparedTurn,
} from '../../src/index.js';
import type { KnowledgeDocumentsOptions } from '../../src/memory/knowledge/feature.js';
import { STATIC_KNOWLEDGE_END, STATIC_KNOWLEDGE_START } from '../../src/memory/knowledge/format.js';
import { MEMORY_NOTICE } from '../../src/memory/trust/fence.js';
import { countMessagesTokens, countMessageTokens } from '../../src/model/messages.js';
import { InMemoryDocumentStore } from '../../src/store/documents/memory.js';
import { bundleWith } from '../bundle.js';

const tok = defaultTokenizer;
const SYSTEM_PROMPT = 'You are a Python expert.';
const shared = { userId: 'shared', agentId: 'python-expert' };

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

function build(options: KnowledgeDocumentsOptions, maxTokens = 16_000, shares?: Record<string, number>) {
  return new KiokuBuilder({
    stores: bundleWith({}),
    systemPrompt: SYSTEM_PROMPT,
    budget: { maxTokens, ...(shares ? { shares } : {}) },
  })
    .use(knowledgeDocuments(options))
    .build();
}

/** The ledger adds up, the prompt fits, and the knowledge entry matches its messages. */
function expectAccounted(turn: PreparedTurn): void {
  const { ledger, messages } = turn;
  expect(ledger.totalTokens).toBe(countMessagesTokens(tok, messages) + ledger.tools.tokens);
  expect(ledger.totalTokens).toBe(
    ledger.baseTokens + ledger.tools.tokens + ledger.entries.reduce((s, e) => s + e.tokens, 0),
  );
  expect(ledger.totalTokens).toBeLessThanOrEqual(ledger.maxTokens);
  for (const entry of ledger.entries) expect(entry.tokens).toBeLessThanOrEqual(entry.allottedTokens);
}

const knowledge = (turn: PreparedTurn) =>
  turn.messages.filter((m) => m.role === 'system' && m.content.startsWith(STATIC_KNOWLEDGE_START));

const sentence = (topic: string, i: number) =>
  `Rule ${i} about ${topic}: keep ${topic} consistent across every module you write.`;

describe('knowledgeDocuments: full text', () => {
  it('injects every document as a [STATIC_KNOWLEDGE] block after the system prompt, with no tools', async () => {
    const store = new InMemoryDocumentStore();
    const alice = { userId: 'alice' };
    await store.create(alice, { title: 'Style', text: 'Use four spaces.' });
    await store.create(alice, { title: 'Testing', text: 'Use pytest.\n\nName tests test_*.' });
    const kioku = build({ store });
    const convo = await kioku.startConversation(alice);
    const turn = await convo.prepare('How should I indent?');
    expect(turn.messages).toEqual([
      { role: 'system', content: `${SYSTEM_PROMPT}\n\n${MEMORY_NOTICE}` },
      {
        role: 'system',
        content:
          '[STATIC_KNOWLEDGE]\n## Style\nUse four spaces.\n\n## Testing\nUse pytest.\n\nName tests test_*.\n[END_STATIC_KNOWLEDGE]',
      },
      { role: 'user', content: 'How should I indent?' },
    ]);
    expect(turn.tools).toEqual([]);
    expect(kioku.features[0]).toMatchObject({ name: 'knowledge' });
    expect(kioku.features[0]?.toolkit).toBeUndefined();
    expect(turn.ledger.entries).toEqual([
      {
        middleware: 'knowledge',
        allottedTokens: 6000, // the default knowledge share
        tokens: countMessageTokens(tok, turn.messages[1]!),
        included: 2,
        dropped: [],
      },
    ]);
    expectAccounted(turn);
  });

  it('cuts the knowledge to min(allotted, maxTokens), wrapper included, and drops what is left out', async () => {
    const store = new InMemoryDocumentStore();
    const alice = { userId: 'alice' };
    const docs = [];
    for (const topic of ['naming', 'imports', 'typing', 'logging', 'errors'])
      docs.push(
        await store.create(alice, {
          title: `Guide to ${topic}`,
          text: Array.from({ length: 20 }, (_, i) => sentence(topic, i)).join(' '),
        }),
      );
    let previous = 0;
    for (const maxTokens of [30, 60, 333, 700, 1500]) {
      const convo = await build({ store, maxTokens }).startConversation(alice);
      const turn = await convo.prepare('Tell me about typing');
      expectAccounted(turn);
      const entry = turn.ledger.entries[0]!;
      const [block] = knowledge(turn);
      expect(entry.tokens).toBeLessThanOrEqual(maxTokens);
      expect(block?.content.endsWith(`\n${STATIC_KNOWLEDGE_END}`)).toBe(true);
      expect(block?.content.startsWith(`${STATIC_KNOWLEDGE_START}\n## Guide to naming\nRule 0`)).toBe(true);
      // The cut never leaves a document with nothing but its heading.
      expect(block?.content).not.toMatch(/## [^\n]*\n\[END_STATIC_KNOWLEDGE\]$/);
      // A budget that fits everything but a handful of tokens: nearly all of it used.
      expect(entry.tokens).toBeGreaterThan(maxTokens - 10);
      expect(entry.tokens).toBeGreaterThan(previous);
      previous = entry.tokens;
      expect(entry.included + entry.dropped.length).toBe(docs.length);
      expect(entry.dropped.every((d) => d.reason === 'budget')).toBe(true);
      // Oldest first: what is dropped is the tail.
      expect(entry.dropped.map((d) => d.id)).toEqual(docs.slice(entry.included).map((d) => d.id));
    }
    // Room for the wrapper and a heading but no text: no block rather than a bare "## Guide to …".
    const convo = await build({ store, maxTokens: 20 }).startConversation(alice);
    const turn = await convo.prepare('Tell me about typing');
    expect(knowledge(turn)).toEqual([]);
    expect(turn.ledger.entries[0]).toMatchObject({ tokens: 0, included: 0 });
    expect(turn.ledger.entries[0]!.dropped).toHaveLength(docs.length);
  });

  it('counts the knowledge again when the documents change between turns of one conversation', async () => {
    const store = new InMemoryDocumentStore();
    const alice = { userId: 'alice' };
    const first = await store.create(alice, { title: 'Guide to naming', text: sentence('naming', 1) });
    const convo = await build({ store, maxTokens: 120 }).startConversation(alice);
    const one = await convo.prepare('naming?');
    expectAccounted(one);
    expect(one.ledger.entries[0]).toMatchObject({ included: 1, dropped: [] });
    expect(await convo.prepare('naming?')).toEqual(one); // same text, same count
    const big = await store.create(alice, {
      title: 'Guide to typing',
      text: Array.from({ length: 30 }, (_, i) => sentence('typing', i)).join(' '),
    });
    const two = await convo.prepare('naming?');
    expectAccounted(two);
    expect(two.ledger.entries[0]!.tokens).toBeLessThanOrEqual(120);
    expect(two.ledger.entries[0]!.tokens).toBeGreaterThan(110);
    expect(two.ledger.entries[0]).toMatchObject({ included: 2, dropped: [] });
    await store.delete(alice, first.id);
    const three = await convo.prepare('naming?');
    expectAccounted(three);
    expect(knowledge(three)[0]?.content.startsWith(`${STATIC_KNOWLEDGE_START}\n## Guide to typing`)).toBe(
      true,
    );
    expect(three.ledger.entries[0]).toMatchObject({ included: 1, dropped: [] });
    expect(big.id).toBeDefined();
  });

  it('reads the documents only when their revision moved; a store without one is read every turn', async () => {
    for (const withRevision of [true, false]) {
      const store = new InMemoryDocumentStore();
      const lists: string[] = [];
      // The store as the middleware sees it: `list` counted, `revision` hidden for a store without one.
      const seen = new Proxy(store, {
        get(target, key) {
          if (key === 'revision' && !withRevision) return undefined;
          if (key === 'list') lists.push('list');
          const value = Reflect.get(target, key, target);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      const alice = { userId: 'alice' };
      await store.create(alice, { title: 'Guide to naming', text: sentence('naming', 1) });
      const convo = await build({ store: seen }).startConversation(alice);
      const one = await convo.prepare('naming?');
      expect(await convo.prepare('naming?')).toEqual(one);
      expect(lists).toHaveLength(withRevision ? 1 : 2);
      await store.create(alice, { title: 'Guide to typing', text: sentence('typing', 2) });
      const two = await convo.prepare('naming?');
      expect(lists).toHaveLength(withRevision ? 2 : 3);
      expect(two.ledger.entries[0]).toMatchObject({ included: 2, dropped: [] });
      expect(knowledge(two)[0]?.content).toContain('Guide to typing');
    }
  });

  it('stays within a small whole-prompt budget, where what is left is less than the share', async () => {
    const store = new InMemoryDocumentStore();
    await store.create({ userId: 'alice' }, { title: 'Big', text: sentence('naming', 1).repeat(200) });
    const convo = await build({ store }, 120).startConversation({ userId: 'alice' });
    const turn = await convo.prepare('naming?');
    expectAccounted(turn);
    expect(turn.ledger.totalTokens).toBeLessThanOrEqual(120);
    expect(turn.ledger.entries[0]!.allottedTokens).toBe(120 - turn.ledger.baseTokens);
    expect(turn.ledger.entries[0]!.included).toBe(1);
  });

  it('injects nothing when there are no documents or not even the wrapper fits', async () => {
    const store = new InMemoryDocumentStore();
    const empty = await (await build({ store }).startConversation({ userId: 'alice' })).prepare('hi');
    expect(empty.messages).toHaveLength(2);
    expect(empty.ledger.entries[0]).toMatchObject({ tokens: 0, included: 0, dropped: [] });

    const doc = await store.create({ userId: 'alice' }, { title: 'T', text: 'Some text' });
    const tiny = await (await build({ store, maxTokens: 8 }).startConversation({ userId: 'alice' })).prepare(
      'hi',
    );
    expect(knowledge(tiny)).toEqual([]);
    expect(tiny.ledger.entries[0]).toMatchObject({
      tokens: 0,
      included: 0,
      dropped: [{ id: doc.id, reason: 'budget', tokens: doc.tokenCount }],
    });
    expectAccounted(tiny);
  });
});

describe('knowledgeDocuments: indexed retrieval', () => {
  async function library() {
    const store = new InMemoryDocumentStore({ chunkTokens: 40 });
    const packaging = await store.create(shared, {
      title: 'Packaging',
      text: Array.from({ length: 8 }, (_, i) => `Pin dependency versions in a lock file, step ${i}.`).join(
        '\n\n',
      ),
    });
    const cooking = await store.create(shared, {
      title: 'Cooking',
      text: 'Simmer the tomato sauce for twenty minutes.\n\nSalt the pasta water generously.',
    });
    return { store, packaging, cooking };
  }

  it('injects the chunks that match the user message, best first, under their document titles', async () => {
    const { store, packaging } = await library();
    const convo = await build({ store, strategy: 'indexed', owner: shared, topK: 3 }).startConversation({
      userId: 'alice',
    });
    const turn = await convo.prepare('How do I pin dependency versions?');
    const hits = await store.search(shared, { query: 'How do I pin dependency versions?', limit: 3 });
    expect(hits).toHaveLength(3);
    expect(hits.every((h) => h.documentId === packaging.id)).toBe(true);
    const [block] = knowledge(turn);
    expect(block?.content).toBe(
      [
        STATIC_KNOWLEDGE_START,
        hits.map((h) => `## Packaging (part ${h.chunk.index + 1})\n${h.chunk.text}`).join('\n\n'),
        STATIC_KNOWLEDGE_END,
      ].join('\n'),
    );
    expect(block?.content).not.toContain('tomato');
    expect(turn.ledger.entries[0]).toMatchObject({ included: 3, dropped: [] });
    expectAccounted(turn);
  });

  it('adds chunks until the next does not fit and drops the rest with reason budget', async () => {
    const { store } = await library();
    const query = 'pin dependency versions lock file';
    const hits = await store.search(shared, { query, limit: 5 });
    const twoChunks = countMessageTokens(tok, {
      role: 'system',
      content: [
        STATIC_KNOWLEDGE_START,
        hits
          .slice(0, 2)
          .map((h) => `## ${h.title} (part ${h.chunk.index + 1})\n${h.chunk.text}`)
          .join('\n\n'),
        STATIC_KNOWLEDGE_END,
      ].join('\n'),
    });
    const kioku = build({ store, strategy: 'indexed', owner: shared, maxTokens: twoChunks + 5 });
    const turn = await (await kioku.startConversation({ userId: 'bob' })).prepare(query);
    const entry = turn.ledger.entries[0]!;
    expect(entry.tokens).toBe(twoChunks);
    expect(entry.included).toBe(2);
    expect(entry.dropped).toEqual(
      hits.slice(2).map((h) => ({
        id: `${h.documentId}#${h.chunk.index}`,
        reason: 'budget',
        tokens: h.chunk.tokenCount,
      })),
    );
    expectAccounted(turn);
  });

  it('injects nothing when no chunk matches', async () => {
    const { store } = await library();
    const turn = await (
      await build({ store, strategy: 'indexed', owner: shared }).startConversation({ userId: 'a' })
    ).prepare('quantum chromodynamics');
    expect(knowledge(turn)).toEqual([]);
    expect(turn.ledger.entries[0]).toMatchObject({ tokens: 0, included: 0 });
  });

  it('searches with a user message longer than the query limit instead of failing', async () => {
    const { store } = await library();
    const long = `pin dependency versions ${'and more words '.repeat(600)}`;
    const convo = await build({ store, strategy: 'indexed', owner: shared }).startConversation({
      userId: 'a',
    });
    const turn = await convo.prepare(long);
    expect(knowledge(turn)[0]?.content).toContain('## Packaging (part');
  });
});

describe('knowledgeDocuments: whose documents', () => {
  it('reads the turn’s own user + agent by default, so users never see each other’s documents', async () => {
    const store = new InMemoryDocumentStore();
    await store.create(
      { userId: 'alice', agentId: 'tutor' },
      { title: 'Alice notes', text: 'Alice private notes' },
    );
    await store.create(
      { userId: 'bob', agentId: 'tutor' },
      { title: 'Bob notes', text: 'Bob private notes' },
    );
    await store.create(
      { userId: 'alice', agentId: 'other' },
      { title: 'Other agent', text: 'Other agent notes' },
    );
    const kioku = build({ store });
    const alice = await (await kioku.startConversation({ userId: 'alice', agentId: 'tutor' })).prepare(
      'notes',
    );
    const text = knowledge(alice)[0]?.content ?? '';
    expect(text).toContain('Alice private notes');
    expect(text).not.toContain('Bob');
    expect(text).not.toContain('Other agent');
  });

  it('reads the owner scope instead when given: every user shares one agent’s knowledge', async () => {
    const store = new InMemoryDocumentStore();
    await store.create(shared, { title: 'PEP 8', text: 'Limit lines to 79 characters.' });
    await store.create({ userId: 'alice', agentId: 'python-expert' }, { title: 'Mine', text: 'alice only' });
    const kioku = build({ store, owner: shared });
    for (const userId of ['alice', 'bob']) {
      const turn = await (await kioku.startConversation({ userId, agentId: 'python-expert' })).prepare(
        'lines?',
      );
      expect(knowledge(turn)[0]?.content).toBe(
        '[STATIC_KNOWLEDGE]\n## PEP 8\nLimit lines to 79 characters.\n[END_STATIC_KNOWLEDGE]',
      );
    }
  });

  it('puts the knowledge in front of the model on run', async () => {
    const store = new InMemoryDocumentStore();
    await store.create(shared, { title: 'PEP 8', text: 'Limit lines to 79 characters.' });
    const convo = await build({ store, owner: shared }).startConversation({ userId: 'carol' });
    const model = scriptedModel([{ role: 'assistant', content: '79.' }]);
    const result = await convo.run('How long may a line be?', model);
    expect(result.answer).toBe('79.');
    expect(model.prompts[0]?.[1]?.content).toContain('Limit lines to 79 characters.');
    expect(model.prompts[0]?.at(-1)).toEqual({ role: 'user', content: 'How long may a line be?' });
  });

  it('rejects invalid options', () => {
    const store = new InMemoryDocumentStore();
    expect(() => knowledgeDocuments({ store, strategy: 'vector' as 'indexed' })).toThrow(
      /knowledgeDocuments options/,
    );
    expect(() => knowledgeDocuments({ store, topK: 0 })).toThrow(/knowledgeDocuments options/);
    expect(() => knowledgeDocuments({ store, owner: { userId: '../etc' } })).toThrow(/scope/);
  });
});
