import { describe, expect, it } from 'vitest';
import { defaultTokenizer, KiokuBuilder } from '../../src/index.js';
import { allFacts } from '../../src/memory/facts/all/feature.js';
import { countMessageTokens, countToolsTokens } from '../../src/model/messages.js';
import { toOpenAITool } from '../../src/model/tool.js';
import type { TokenBudgetOptions } from '../../src/runtime/token-budget.js';
import { DEFAULT_SHARES } from '../../src/runtime/token-budget.js';
import { InMemoryFactStore } from '../../src/store/facts/memory.js';
import { InMemorySessionStore } from '../../src/store/sessions/memory.js';
import { ManualClock } from '../../src/testing.js';
import { bundleWith } from '../bundle.js';
import {
  accountedFor,
  answer,
  callTools,
  entryOf,
  expectLedgerAddsUp,
  injected,
  scriptedModel,
  toolResults,
  toolTokensOf,
} from './memory-features.harness.js';

const alice = { userId: 'alice' };
const bob = { userId: 'bob' };
const tok = defaultTokenizer;

function setup(
  options: { maxTokens?: number; showIds?: boolean; budget?: TokenBudgetOptions } = {},
  facts = new InMemoryFactStore({ clock: new ManualClock(Date.UTC(2025, 0, 15, 10)) }),
) {
  const sessions = new InMemorySessionStore();
  const feature = allFacts({
    store: facts,
    ...(options.maxTokens === undefined ? {} : { maxTokens: options.maxTokens }),
    ...(options.showIds === undefined ? {} : { showIds: options.showIds }),
  });
  const budget = options.budget ?? { maxTokens: 16_000 };
  const kioku = new KiokuBuilder({
    stores: bundleWith({ sessions }),
    systemPrompt: 'You are helpful.',
    budget,
  })
    .use(feature)
    .build();
  return { facts, sessions, kioku, budget };
}

/** The block with one more line, as fitLines would have to count it. */
const systemTokens = (content: string) => countMessageTokens(tok, { role: 'system', content });

describe('allFacts — the [DYNAMIC_MEMORY] block', () => {
  it('injects the user’s facts newest-updated first, with ids, after the system prompt', async () => {
    const clock = new ManualClock(Date.UTC(2025, 0, 15, 10));
    const facts = new InMemoryFactStore({ clock });
    const { kioku } = setup({}, facts);
    const diet = await facts.create(alice, { title: 'Diet', content: 'Vegetarian' });
    clock.advance(1_000);
    const city = await facts.create(alice, { content: 'Lives in Lyon' });
    clock.advance(1_000);
    const lang = await facts.create(alice, { title: 'Language', content: 'Writes TypeScript' });
    clock.advance(1_000);
    await facts.update(alice, diet.id, { content: 'Vegan since 2024' }); // now the freshest

    const convo = await kioku.startConversation(alice);
    const turn = await convo.prepare('What should I cook?');
    expect(turn.messages.map((m) => m.role)).toEqual(['system', 'system', 'user']);
    expect(turn.messages[1]!.content).toBe(
      [
        '[DYNAMIC_MEMORY]',
        `- [${diet.id}] (user) Diet: Vegan since 2024`,
        `- [${lang.id}] (user) Language: Writes TypeScript`,
        `- [${city.id}] (user) Lives in Lyon`,
        '[END_DYNAMIC_MEMORY]',
      ].join('\n'),
    );
    expect(entryOf(turn, 'facts')).toMatchObject({ included: 3, dropped: [] });
    expectLedgerAddsUp(turn, 16_000);
  });

  it('shows every edit in the next turn, also one made in the same millisecond as the newest fact', async () => {
    // The clock never moves: edits keep their place in the newest-first order, so only the store's
    // revision tells the block it changed.
    const { facts, kioku } = setup();
    await facts.create(alice, { id: 'f-tea', content: 'Drinks green tea' });
    await facts.create(alice, { id: 'f-car', content: 'Drives a red car' });
    await facts.create(bob, { id: 'f-tea', content: 'Bob drinks coffee' });
    const convo = await kioku.startConversation(alice);
    const block = async () => injected(await convo.prepare('hi')).join('\n');
    expect(await block()).toContain('Drinks green tea');
    await facts.update(alice, 'f-tea', { content: 'Drinks black tea' });
    expect(await block()).toContain('Drinks black tea');
    await facts.update(alice, 'f-tea', { provenance: { source: 'assistant' } });
    expect(await block()).toContain('[f-tea] (assistant) Drinks black tea');
    await facts.delete(alice, 'f-car');
    expect(await block()).not.toContain('red car');
    await facts.create(alice, { id: 'f-car', content: 'Drives a blue car' });
    expect(await block()).toContain('Drives a blue car');
    // Bob's turn between two of Alice's: each sees their own block.
    expect(injected(await (await kioku.startConversation(bob)).prepare('hi')).join('\n')).not.toContain(
      'Drives',
    );
    expect(await block()).toContain('Drives a blue car');
  });

  it('prints bare lines with showIds: false', async () => {
    const { facts, kioku } = setup({ showIds: false });
    await facts.create(alice, { title: 'Diet', content: 'Vegetarian' });
    await facts.create(alice, { content: 'Lives in Lyon' });
    const turn = await (await kioku.startConversation(alice)).prepare('hi');
    // Same clock time: ties go to the later-created, then by id — both lines are there either way.
    expect(injected(turn)).toHaveLength(1);
    const lines = injected(turn)[0]!.split('\n');
    expect(lines[0]).toBe('[DYNAMIC_MEMORY]');
    expect(lines.slice(1, 3).sort()).toEqual(['- (user) Diet: Vegetarian', '- (user) Lives in Lyon']);
    expect(lines[3]).toBe('[END_DYNAMIC_MEMORY]');
  });

  it('injects nothing when the user has no facts', async () => {
    const { facts, kioku } = setup();
    await facts.create(bob, { content: 'Bob’s secret' });
    const turn = await (await kioku.startConversation(alice)).prepare('hi');
    expect(turn.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(entryOf(turn, 'facts')).toMatchObject({ tokens: 0, included: 0, dropped: [] });
    expectLedgerAddsUp(turn, 16_000);
  });

  it('never shows another user’s or another agent’s facts', async () => {
    const { facts, kioku } = setup();
    await facts.create(alice, { content: 'Alice likes tea' });
    await facts.create(bob, { content: 'Bob likes coffee' });
    await facts.create({ userId: 'alice', agentId: 'coder' }, { content: 'Alice uses vim' });
    const forAlice = injected(await (await kioku.startConversation(alice)).prepare('hi')).join('\n');
    expect(forAlice).toContain('Alice likes tea');
    expect(forAlice).not.toContain('Bob');
    expect(forAlice).not.toContain('vim');
    const forBob = injected(await (await kioku.startConversation(bob)).prepare('hi')).join('\n');
    expect(forBob).toContain('Bob likes coffee');
    expect(forBob).not.toContain('Alice');
    const forCoder = injected(
      await (await kioku.startConversation({ userId: 'alice', agentId: 'coder' })).prepare('hi'),
    ).join('\n');
    expect(forCoder).toContain('Alice uses vim');
    expect(forCoder).not.toContain('tea');
  });
});

describe('allFacts — token budget', () => {
  async function manyFacts(facts: InMemoryFactStore, clock: ManualClock, n: number) {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      ids.push(
        // Fixed ids (12 characters like the store's own): random ones tokenize differently run to run.
        (
          await facts.create(alice, {
            id: `f${String(i).padStart(11, '0')}`,
            title: `Fact ${i}`,
            content: `Detail number ${i} about work`,
          })
        ).id,
      );
      clock.advance(1_000);
    }
    return ids.reverse(); // newest first
  }

  it('adds facts until the next would exceed maxTokens, drops the rest with their cost', async () => {
    const clock = new ManualClock();
    const facts = new InMemoryFactStore({ clock });
    const { kioku } = setup({ maxTokens: 80 }, facts);
    const ids = await manyFacts(facts, clock, 30);
    const turn = await (await kioku.startConversation(alice)).prepare('hi');
    expectLedgerAddsUp(turn, 16_000);
    const entry = entryOf(turn, 'facts');
    expect(entry.allottedTokens).toBe(DEFAULT_SHARES['facts']);
    expect(entry.tokens).toBeLessThanOrEqual(80);
    expect(entry.included).toBeGreaterThan(2);
    expect(entry.included + entry.dropped.length).toBe(30);
    // Shown newest first; a line that does not fit is skipped, never reordered (here, with lines of one
    // size, the shown ones are exactly the newest).
    const block = injected(turn)[0]!;
    const lines = block.split('\n').slice(1, -1);
    const shown = lines.map((l) => l.slice(3, 15));
    expect(shown).toEqual(ids.filter((id) => shown.includes(id)));
    expect(shown).toEqual(ids.slice(0, entry.included));
    expect(entry.dropped.map((d) => d.id)).toEqual(ids.slice(entry.included));
    for (const drop of entry.dropped) {
      expect(drop.reason).toBe('budget');
      expect(drop.tokens).toBeGreaterThan(5);
    }
    // The next fact really would not have fitted.
    const next = `- [${ids[entry.included]}] (user) Fact ${29 - entry.included}: Detail number ${29 - entry.included} about work`;
    const withNext = block.replace('\n[END_DYNAMIC_MEMORY]', `\n${next}\n[END_DYNAMIC_MEMORY]`);
    expect(systemTokens(withNext)).toBeGreaterThan(80);
  });

  it('respects the budget share and the whole-prompt limit when they are the tighter bound', async () => {
    const clock = new ManualClock();
    const facts = new InMemoryFactStore({ clock });
    await manyFacts(facts, clock, 40);
    const byShare = setup({ budget: { maxTokens: 16_000, shares: { facts: 60 } } }, facts);
    const shared = await (await byShare.kioku.startConversation(alice)).prepare('hi');
    expect(entryOf(shared, 'facts').allottedTokens).toBe(60);
    expect(entryOf(shared, 'facts').tokens).toBeLessThanOrEqual(60);
    expect(entryOf(shared, 'facts').tokens).toBeGreaterThan(40);
    expectLedgerAddsUp(shared, 16_000);

    // Tight budgets for the block: the tool definitions are paid for first.
    const tools = toolTokensOf(setup({}, facts).kioku);
    for (const maxTokens of [60, 75, 90, 130, 190].map((room) => tools + room)) {
      const tight = setup({ budget: { maxTokens } }, facts);
      const turn = await (await tight.kioku.startConversation(alice)).prepare('hi');
      expectLedgerAddsUp(turn, maxTokens);
      const entry = entryOf(turn, 'facts');
      expect(accountedFor(entry)).toBe(40);
    }
  });

  it('skips a fact too big for the budget and still fits the smaller ones after it', async () => {
    const clock = new ManualClock();
    const facts = new InMemoryFactStore({ clock });
    const { kioku } = setup({ maxTokens: 60 }, facts);
    const small = await facts.create(alice, { content: 'Prefers short answers' });
    clock.advance(1_000);
    const big = await facts.create(alice, { content: 'word '.repeat(500).trim() });
    const turn = await (await kioku.startConversation(alice)).prepare('hi');
    expect(injected(turn)[0]).toContain(small.id);
    expect(entryOf(turn, 'facts').dropped).toEqual([
      { id: big.id, reason: 'budget', tokens: expect.any(Number) },
    ]);
    expect(entryOf(turn, 'facts').dropped[0]!.tokens).toBeGreaterThan(500);
  });

  it('reads thousands of facts a page at a time and accounts for the unread ones as one group', async () => {
    const clock = new ManualClock();
    const facts = new InMemoryFactStore({ clock });
    // Fixed ids: random ones vary a line's token count, which moves the budget's edge between runs.
    const inputs = Array.from({ length: 3000 }, (_, i) => ({
      id: `fact-${String(i).padStart(4, '0')}`,
      title: `Fact ${i}`,
      content: `Detail number ${i} about work`,
    }));
    for (const input of inputs) {
      await facts.create(alice, input);
      clock.advance(1_000);
    }
    // An old fact, updated just now, comes first.
    const [oldest] = await facts.list(alice, { limit: 1 });
    await facts.update(alice, oldest!.id, { content: 'Moved to Lisbon' });
    const listed: unknown[] = [];
    const spy = {
      list: (scope: typeof alice, options: unknown) => {
        listed.push(options);
        return facts.list(scope, options as never);
      },
      count: (scope: typeof alice) => facts.count(scope),
    } as unknown as InMemoryFactStore;
    const { kioku } = setup({ maxTokens: 2_000 }, spy);
    const turn = await (await kioku.startConversation(alice)).prepare('hi');
    expectLedgerAddsUp(turn, 16_000);
    const entry = entryOf(turn, 'facts');
    expect(accountedFor(entry)).toBe(3000);
    const block = injected(turn)[0]!;
    expect(block.split('\n')[1]).toBe(`- [${oldest!.id}] (user) Fact 0: Moved to Lisbon`);
    // Newest updated first; a line that does not fit is skipped (a budget drop) and a shorter one may follow.
    const lines = block.split('\n').slice(1, -1);
    const newest = await facts.list(alice, { order: 'updated', limit: 200 });
    const shown = new Set(lines.map((l) => l.slice(3, l.indexOf(']'))));
    const lastShown = newest.findLastIndex((f) => shown.has(f.id));
    const upToLast = newest.slice(0, lastShown + 1);
    expect(lines).toEqual(
      upToLast.filter((f) => shown.has(f.id)).map((f) => `- [${f.id}] (user) ${f.title}: ${f.content}`),
    );
    const budgetDrops = new Set(entry.dropped.filter((d) => d.reason === 'budget').map((d) => d.id));
    for (const skipped of upToLast.filter((f) => !shown.has(f.id))) expect(budgetDrops).toContain(skipped.id);
    expect(lines).toHaveLength(entry.included);
    // A couple of pages were read, not all 3000 facts; the rest is one group entry.
    expect(listed.length).toBeLessThanOrEqual(3);
    const group = entry.dropped.at(-1)!;
    expect(group).toMatchObject({ id: 'unread-facts', reason: 'budget' });
    expect(group.count).toBeGreaterThan(2500);
  });

  it('injects nothing (and drops everything) when not even one fact fits', async () => {
    const { facts, kioku } = setup({ maxTokens: 12 });
    await facts.create(alice, { content: 'A fact that cannot fit into twelve tokens with the markers' });
    const turn = await (await kioku.startConversation(alice)).prepare('hi');
    expect(injected(turn)).toEqual([]);
    expect(entryOf(turn, 'facts')).toMatchObject({ tokens: 0, included: 0 });
    expect(entryOf(turn, 'facts').dropped).toHaveLength(1);
  });

  it('stays within the limit even with a tokenizer whose line-by-line estimate runs low', async () => {
    // Each newline costs 5 tokens here, so costing lines one by one (line + 1) underestimates the block.
    const newlineHeavy = {
      name: 'newline-heavy',
      count: (text: string) =>
        text.split(/\s+/).filter(Boolean).length + 5 * (text.match(/\n/g)?.length ?? 0),
      truncate: (text: string) => text,
    };
    const facts = new InMemoryFactStore();
    for (let i = 0; i < 20; i++) await facts.create(alice, { content: `fact ${i} here` });
    const feature = allFacts({ store: facts });
    // 100 tokens for the prompt beside the tool definitions, counted with the same tokenizer.
    const tools = countToolsTokens(newlineHeavy, (feature.toolkit?.tools ?? []).map(toOpenAITool));
    const maxTokens = tools + 100;
    const kioku = new KiokuBuilder({
      stores: bundleWith({}),
      tokenizer: newlineHeavy,
      budget: { maxTokens },
    })
      .use(feature)
      .build();
    const turn = await (await kioku.startConversation(alice)).prepare('hi');
    const entry = entryOf(turn, 'facts');
    expect(turn.ledger.tools.tokens).toBe(tools);
    expect(entry.tokens).toBeLessThanOrEqual(maxTokens - tools - turn.ledger.baseTokens);
    expect(entry.tokens).toBeGreaterThan(50);
    expect(entry.included + entry.dropped.length).toBe(20);
    // Nothing was cut by the Conversation's own safety net: the middleware kept to its allotment.
    expect(entry.dropped.every((d) => !d.id.startsWith('message-'))).toBe(true);
    expect(turn.ledger.totalTokens).toBeLessThanOrEqual(maxTokens);
  });

  it('renders a fact’s current text turn after turn, even from a store that mutates its records', async () => {
    // In-memory records are frozen; a store that edits its objects in place must not be shown a stale
    // cached line. Only `list` and `count` are used by the middleware.
    const now = '2025-01-15T10:00:00.000Z';
    const fact = {
      id: 'f1',
      userId: 'alice',
      content: 'Vegetarian',
      category: 'general',
      tags: [],
      metadata: {},
      provenance: { source: 'user' as const },
      createdAt: now,
      updatedAt: now,
    };
    const store = { list: async () => [fact], count: async () => 1 } as unknown as InMemoryFactStore;
    const { kioku } = setup({ maxTokens: 24 }, store);
    const convo = await kioku.startConversation(alice);
    expect(injected(await convo.prepare('Hi'))).toEqual([
      '[DYNAMIC_MEMORY]\n- [f1] (user) Vegetarian\n[END_DYNAMIC_MEMORY]',
    ]);
    fact.content = 'Vegan since 2024, and cooks for the whole family every Sunday evening';
    const turn = await convo.prepare('Hi');
    // The longer text no longer fits in 24 tokens: counted anew, dropped with its real cost.
    expect(injected(turn)).toEqual([]);
    expect(entryOf(turn, 'facts').dropped).toEqual([
      { id: 'f1', reason: 'budget', tokens: tok.count(`- [f1] (user) ${fact.content}`) + 1 },
    ]);
    fact.content = 'Vegan';
    expect(injected(await convo.prepare('Hi'))).toEqual([
      '[DYNAMIC_MEMORY]\n- [f1] (user) Vegan\n[END_DYNAMIC_MEMORY]',
    ]);
  });

  it('rejects invalid options', () => {
    expect(() => allFacts({ store: new InMemoryFactStore(), maxTokens: 0 })).toThrow(
      expect.objectContaining({ code: 'VALIDATION' }),
    );
    expect(allFacts({ store: new InMemoryFactStore(), tools: false }).toolkit).toBeUndefined();
  });
});

describe('allFacts — tools', () => {
  it('creates, updates and deletes facts in the user’s scope, visible on the next turn', async () => {
    const { facts, kioku } = setup();
    const convo = await kioku.startConversation(alice);
    expect(convo.tools.map((t) => t.function.name)).toEqual([
      'create_memory',
      'update_memory',
      'delete_memory',
    ]);

    const created = await convo.run(
      'I am vegetarian',
      scriptedModel([
        callTools(['create_memory', { title: 'Diet', content: 'Vegetarian', category: 'user-preferences' }]),
        answer('Noted.'),
      ]),
    );
    const [fact] = await facts.list(alice);
    expect(fact).toMatchObject({
      title: 'Diet',
      content: 'Vegetarian',
      category: 'user-preferences',
      provenance: { source: 'assistant', toolName: 'create_memory', sessionId: convo.sessionId },
    });
    expect(toolResults(created.messages)).toEqual([{ ok: `Created memory ${fact!.id}: Diet` }]);
    expect(await facts.list(bob)).toEqual([]);

    const next = await convo.prepare('What do I eat?');
    expect(injected(next)).toEqual([
      `[DYNAMIC_MEMORY]\n- [${fact!.id}] (assistant) Diet: Vegetarian\n[END_DYNAMIC_MEMORY]`,
    ]);

    const updated = await convo.run(
      'Actually vegan now',
      scriptedModel([callTools(['update_memory', { id: fact!.id, content: 'Vegan' }]), answer()]),
    );
    expect(toolResults(updated.messages)).toEqual([{ ok: `Updated memory ${fact!.id}.` }]);
    expect(await facts.get(alice, fact!.id)).toMatchObject({ title: 'Diet', content: 'Vegan' });

    const deleted = await convo.run(
      'Forget my diet',
      scriptedModel([callTools(['delete_memory', { id: fact!.id }]), answer()]),
    );
    expect(toolResults(deleted.messages)).toEqual([{ ok: `Deleted memory ${fact!.id}.` }]);
    expect(await facts.list(alice)).toEqual([]);
    expect(injected(await convo.prepare('hi'))).toEqual([]);
  });

  it('returns bad arguments and unknown ids to the model as errors and changes nothing', async () => {
    const { facts, kioku } = setup();
    const mine = await facts.create(alice, { title: 'Diet', content: 'Vegetarian' });
    const bobs = await facts.create(bob, { content: 'Bob’s fact' });
    const before = { alice: await facts.list(alice), bob: await facts.list(bob) };
    const convo = await kioku.startConversation(alice);
    const result = await convo.run(
      'mess things up',
      scriptedModel([
        callTools(
          ['create_memory', { title: 42, content: 'x' }],
          ['create_memory', { title: 'No content' }],
          ['create_memory', { title: 'T', content: 'c', category: '../etc' }],
          ['create_memory', '{"title": "T", '],
          ['update_memory', { id: 'nope123', content: 'x' }],
          ['update_memory', { id: mine.id }],
          ['update_memory', { id: bobs.id, content: 'hijacked' }],
          ['delete_memory', { id: 'nope123' }],
          ['delete_memory', { id: bobs.id }],
          ['delete_memory', { id: 7 }],
          ['delete_memory', { id: '../x' }],
        ),
        answer(),
      ]),
    );
    expect(toolResults(result.messages)).toEqual([
      { error: 'VALIDATION' },
      { error: 'VALIDATION' },
      { error: 'VALIDATION' },
      { error: 'INVALID_JSON' },
      { error: 'NOT_FOUND' },
      { error: 'VALIDATION' },
      { error: 'NOT_FOUND' },
      { error: 'NOT_FOUND' },
      { error: 'NOT_FOUND' },
      { error: 'VALIDATION' },
      { error: 'VALIDATION' },
    ]);
    expect(await facts.list(alice)).toEqual(before.alice);
    expect(await facts.list(bob)).toEqual(before.bob);
  });
});
