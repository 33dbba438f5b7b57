import { describe, expect, it } from 'vitest';
import { KiokuBuilder } from '../../src/index.js';
import { allFacts } from '../../src/memory/facts/all/feature.js';
import type { FactRecallOptions } from '../../src/memory/facts/recall/feature.js';
import { factRecall } from '../../src/memory/facts/recall/feature.js';
import { RECALL_INJECTED_KEY } from '../../src/memory/facts/recall/injected.js';
import { InMemoryFactStore } from '../../src/store/facts/memory.js';
import type { FactStore } from '../../src/store/facts/store.js';
import { InMemorySessionStore } from '../../src/store/sessions/memory.js';
import { ManualClock } from '../../src/testing.js';
import { bundleWith } from '../bundle.js';
import {
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
const HEADER = '[RECALLED_MEMORY] (long-term memory relevant to this message)';

function setup(options: Partial<Omit<FactRecallOptions, 'store' | 'sessions'>> & { budget?: number } = {}) {
  const clock = new ManualClock(Date.UTC(2025, 0, 15, 10));
  const facts = new InMemoryFactStore({ clock });
  const sessions = new InMemorySessionStore({ clock });
  const { budget = 16_000, ...feature } = options;
  const build = () =>
    new KiokuBuilder({
      stores: bundleWith({ sessions }),
      systemPrompt: 'You are helpful.',
      budget: { maxTokens: budget },
      clock,
    })
      .use(factRecall({ store: facts, sessions, ...feature }))
      .build();
  return { clock, facts, sessions, kioku: build(), build, budget };
}

/** Resolves each caller once `n` callers are waiting (later callers pass straight through). */
function barrier(n: number): () => Promise<void> {
  let waiting = 0;
  let release!: () => void;
  const all = new Promise<void>((resolve) => {
    release = resolve;
  });
  return () => {
    if (++waiting >= n) release();
    return all;
  };
}

const recalledIds = (block: string | undefined) =>
  (block ?? '')
    .split('\n')
    .slice(1, -1)
    .map((line) => /^- \[([^\]]+)\]/.exec(line)?.[1]);

describe('factRecall — recall', () => {
  it('injects the facts matching the user message in the [RECALLED_MEMORY] format', async () => {
    const { facts, kioku } = setup();
    const tz = await facts.create(alice, {
      content: 'User is in Chicago (America/Chicago, UTC-6)',
      category: 'user-preferences/timezone',
    });
    await facts.create(alice, { content: 'Owns a cat named Miso' });
    const turn = await (await kioku.startConversation(alice)).prepare('What is my timezone?');
    expect(turn.messages.map((m) => m.role)).toEqual(['system', 'system', 'user']);
    expect(turn.messages[1]!.content).toBe(
      `${HEADER}\n- [${tz.id}] (user-preferences/timezone, user): User is in Chicago (America/Chicago, UTC-6)\n[END_RECALLED_MEMORY]`,
    );
    expect(entryOf(turn, 'fact-recall')).toMatchObject({ included: 1, dropped: [] });
    expectLedgerAddsUp(turn, 16_000);
  });

  it('injects an entry once per session (delta), across turns, resumed conversations and restarts', async () => {
    const { clock, facts, sessions, kioku, build } = setup();
    const tz = await facts.create(alice, {
      content: 'Timezone is Europe/Paris',
      category: 'user-preferences',
    });
    const convo = await kioku.startConversation(alice);

    const first = await convo.run('What is my timezone?', scriptedModel([answer('Paris time.')]));
    expect(entryOf(first, 'fact-recall').included).toBe(1);
    expect(JSON.parse((await sessions.kvGet(alice, convo.sessionId, RECALL_INJECTED_KEY))!.value)).toEqual([
      tz.id,
    ]);

    const model = scriptedModel([answer()]);
    const second = await convo.run('And my timezone again?', model);
    expect(model.prompts[0]!.map((m) => m.content).join('\n')).not.toContain('Europe/Paris');
    expect(entryOf(second, 'fact-recall')).toMatchObject({
      tokens: 0,
      included: 0,
      dropped: [{ id: tz.id, reason: 'already-injected' }],
    });

    // A fact saved later is still new to the session: only it is injected.
    clock.advance(60_000);
    const dst = await facts.create(alice, { content: 'Timezone changes with daylight saving' });
    const third = await convo.prepare('timezone?');
    expect(recalledIds(injected(third)[0])).toEqual([dst.id]);

    // Another Conversation object on the same session, and a whole new stack (a process restart).
    const resumed = await kioku.resumeConversation(alice, convo.sessionId);
    expect(injected(await resumed.prepare('What is my timezone?'))[0]).not.toContain(tz.id);
    const restarted = await build().resumeConversation(alice, convo.sessionId);
    const afterRestart = await restarted.prepare('What is my timezone?');
    expect(injected(afterRestart)[0]).not.toContain(tz.id);
    expect(entryOf(afterRestart, 'fact-recall').dropped).toContainEqual({
      id: tz.id,
      reason: 'already-injected',
    });

    // A new session starts from scratch.
    const fresh = await kioku.startConversation(alice);
    expect(recalledIds(injected(await fresh.prepare('What is my timezone?'))[0])).toContain(tz.id);
  });

  it('falls back to the 5 newest entries on the first turn only, when the search finds nothing', async () => {
    const { clock, facts, kioku } = setup();
    const port = await facts.create(alice, { content: 'Staging listens on port 8080' });
    clock.advance(1_000);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      ids.push((await facts.create(alice, { content: `Project note ${i}` })).id);
      clock.advance(1_000);
    }
    const convo = await kioku.startConversation(alice);
    const model = scriptedModel([answer(), answer()]);
    const first = await convo.run('Good morning!', model);
    expect(recalledIds(model.prompts[0]![1]!.content)).toEqual(ids.slice(1).reverse());
    expect(entryOf(first, 'fact-recall').included).toBe(5);

    // Turn 1: nothing matches and there is no fallback any more.
    const second = await convo.prepare('How are you?');
    expect(second.ledger.entries[0]).toMatchObject({
      middleware: 'fact-recall',
      included: 0,
      dropped: [],
    });
    expect(injected(second)).toEqual([]);

    // On turn 0 a search that finds something wins over the fallback (which would not include the
    // oldest entry at all). Lexical search may add weak feedback-expansion matches after the real one.
    const other = await kioku.startConversation(alice);
    expect(recalledIds(injected(await other.prepare('Which port does staging use?'))[0])[0]).toBe(port.id);
  });

  it('honours fallbackResults and maxResults', async () => {
    const { facts, kioku } = setup({ fallbackResults: 0, maxResults: 3 });
    for (let i = 0; i < 6; i++) await facts.create(alice, { content: `Deploy checklist item ${i}` });
    const convo = await kioku.startConversation(alice);
    expect(injected(await convo.prepare('Good morning!'))).toEqual([]);
    const turn = await convo.prepare('deploy checklist');
    expect(entryOf(turn, 'fact-recall').included).toBe(3);
    expect(() => factRecall({ store: facts, sessions: new InMemorySessionStore(), maxResults: 0 })).toThrow(
      expect.objectContaining({ code: 'VALIDATION' }),
    );
  });

  it('does not mark entries when the turn failed before the model answered, or was never recorded', async () => {
    const { facts, sessions, kioku } = setup();
    const tz = await facts.create(alice, { content: 'Timezone is Asia/Tokyo' });
    const convo = await kioku.startConversation(alice);
    await expect(convo.run('What is my timezone?', scriptedModel([]))).rejects.toThrow(
      'model script exhausted',
    );
    expect(await sessions.kvGet(alice, convo.sessionId, RECALL_INJECTED_KEY)).toBeNull();

    await convo.prepare('What is my timezone?'); // prepared, never run or recorded
    const model = scriptedModel([answer('Tokyo.')]);
    await convo.run('Timezone, please?', model);
    expect(recalledIds(model.prompts[0]![1]!.content)).toEqual([tz.id]);
    expect(JSON.parse((await sessions.kvGet(alice, convo.sessionId, RECALL_INJECTED_KEY))!.value)).toEqual([
      tz.id,
    ]);
  });

  it('treats an unreadable injected-ids value as empty and rewrites it', async () => {
    const { facts, sessions, kioku } = setup();
    const tz = await facts.create(alice, { content: 'Timezone is Europe/Oslo' });
    const convo = await kioku.startConversation(alice);
    await sessions.kvSet(alice, convo.sessionId, RECALL_INJECTED_KEY, '{not json');
    await convo.run('What is my timezone?', scriptedModel([answer()]));
    expect(JSON.parse((await sessions.kvGet(alice, convo.sessionId, RECALL_INJECTED_KEY))!.value)).toEqual([
      tz.id,
    ]);
  });

  it('reads the injected ids again when another process changed them', async () => {
    const { facts, sessions, kioku } = setup();
    const tz = await facts.create(alice, { content: 'Timezone is Europe/Oslo' });
    const convo = await kioku.startConversation(alice);
    await convo.run('What is my timezone?', scriptedModel([answer()]));
    expect(entryOf(await convo.prepare('My timezone again?'), 'fact-recall').dropped).toEqual([
      { id: tz.id, reason: 'already-injected' },
    ]);
    // Another process (or a restore) resets the list: the entry is eligible again.
    await sessions.kvSet(alice, convo.sessionId, RECALL_INJECTED_KEY, '[]');
    expect(recalledIds(injected(await convo.prepare('My timezone again?'))[0])).toEqual([tz.id]);
    // And marks it as injected behind this process's back: it is left out again.
    await sessions.kvSet(alice, convo.sessionId, RECALL_INJECTED_KEY, JSON.stringify([tz.id]));
    expect(entryOf(await convo.prepare('My timezone again?'), 'fact-recall')).toMatchObject({
      included: 0,
      dropped: [{ id: tz.id, reason: 'already-injected' }],
    });
  });

  it('two app instances running turns of one session at once both keep what they recalled', async () => {
    const { facts, sessions, build } = setup();
    const tz = await facts.create(alice, { content: 'Timezone: Europe/Paris' });
    const cat = await facts.create(alice, { content: 'Cat named Miso' });
    // Both instances mark their recalls at the same moment: each has read the list before either writes.
    const bothWriting = barrier(2);
    const gated = new Proxy(sessions, {
      get(target, name) {
        const member = Reflect.get(target, name, target);
        if (name !== 'kvSet') return typeof member === 'function' ? member.bind(target) : member;
        return async (...args: Parameters<typeof sessions.kvSet>) => {
          if (args[2] === RECALL_INJECTED_KEY) await bothWriting();
          return target.kvSet(...args);
        };
      },
    });
    const instance = () =>
      new KiokuBuilder({ stores: bundleWith({ sessions }), systemPrompt: 'You are helpful.' })
        .use(factRecall({ store: facts, sessions: gated, maxResults: 1 }))
        .build();
    const convo = await build().startConversation(alice);
    const other = await instance().resumeConversation(alice, convo.sessionId);
    const mine = await instance().resumeConversation(alice, convo.sessionId);
    const models = [scriptedModel([answer()]), scriptedModel([answer()])];
    await Promise.all([mine.run('timezone?', models[0]!), other.run('Miso?', models[1]!)]);
    expect(recalledIds(models[0]!.prompts[0]![1]!.content)).toEqual([tz.id]);
    expect(recalledIds(models[1]!.prompts[0]![1]!.content)).toEqual([cat.id]);
    const kept = (await sessions.kvList(alice, convo.sessionId)).find((e) => e.key === RECALL_INJECTED_KEY);
    expect(JSON.parse(kept!.value).sort()).toEqual([tz.id, cat.id].sort());
    // So neither fact is shown again in this session, whichever instance serves the next turn.
    expect(entryOf(await mine.prepare('Miso?'), 'fact-recall').included).toBe(0);
    expect(entryOf(await other.prepare('timezone?'), 'fact-recall').included).toBe(0);
  });

  it('fits the block in the tokens it is given and marks only what went in', async () => {
    const { facts, sessions, kioku } = setup({ maxTokens: 60 });
    for (let i = 0; i < 8; i++)
      await facts.create(alice, { content: `Invoice rule ${i}: invoices over ${i} thousand need approval` });
    const convo = await kioku.startConversation(alice);
    const model = scriptedModel([answer(), answer()]);
    const first = await convo.run('How do invoices get approved?', model);
    const entry = entryOf(first, 'fact-recall');
    expect(entry.tokens).toBeLessThanOrEqual(60);
    expect(entry.included).toBeGreaterThan(0);
    expect(entry.included + entry.dropped.length).toBe(8);
    expect(entry.dropped.every((d) => d.reason === 'budget' && (d.tokens ?? 0) > 5)).toBe(true);
    const shown = recalledIds(model.prompts[0]![1]!.content);
    expect(JSON.parse((await sessions.kvGet(alice, convo.sessionId, RECALL_INJECTED_KEY))!.value)).toEqual(
      shown,
    );

    // Next turn: what was dropped for budget is still new; what was shown is not repeated.
    const second = await convo.prepare('How do invoices get approved?');
    expectLedgerAddsUp(second, 16_000);
    const next = recalledIds(injected(second)[0]);
    expect(next.length).toBeGreaterThan(0);
    expect(next.filter((id) => shown.includes(id))).toEqual([]);
    expect(
      entryOf(second, 'fact-recall')
        .dropped.filter((d) => d.reason === 'already-injected')
        .map((d) => d.id)
        .sort(),
    ).toEqual([...shown].sort());
  });

  it('never exceeds a tight whole-prompt budget', async () => {
    // Tight budgets for the block: the tool definitions are paid for first.
    const tools = toolTokensOf(setup().kioku);
    for (const budget of [60, 75, 100, 150].map((room) => tools + room)) {
      const { facts, kioku } = setup({ budget });
      for (let i = 0; i < 8; i++)
        await facts.create(alice, { content: `Server ${i} runs the billing service` });
      const turn = await (await kioku.startConversation(alice)).prepare('billing server');
      expectLedgerAddsUp(turn, budget);
      const entry = entryOf(turn, 'fact-recall');
      expect(entry.included + entry.dropped.length).toBe(8);
    }
  });

  it('never recalls another user’s entries, by search or by fallback', async () => {
    const { facts, kioku } = setup();
    await facts.create(bob, { content: 'Bob’s timezone is Asia/Tokyo' });
    const convo = await kioku.startConversation(alice);
    const turn = await convo.prepare('What is my timezone?'); // turn 0: search, then fallback
    expect(injected(turn)).toEqual([]);
    expect(entryOf(turn, 'fact-recall')).toMatchObject({ included: 0, dropped: [] });
    await facts.create(alice, { content: 'Alice’s timezone is America/Denver' });
    const block = injected(await convo.prepare('What is my timezone?'))[0]!;
    expect(block).toContain('Denver');
    expect(block).not.toContain('Tokyo');
  });

  it('surfaces anti-pattern entries like any other memory', async () => {
    const { facts, kioku } = setup();
    const convo = await kioku.startConversation(alice);
    const saved = await convo.run(
      'Stop using search_files for this',
      scriptedModel([
        callTools([
          'save_memory',
          {
            content:
              "Don't use search_files for content search — instead use grep; it finds text inside files",
            category: 'anti-patterns/file-operations',
            tags: ['anti-pattern'],
          },
        ]),
        answer('Understood.'),
      ]),
    );
    const [fact] = await facts.list(alice);
    expect(toolResults(saved.messages)).toEqual([
      { ok: `Saved memory ${fact!.id} (anti-patterns/file-operations).` },
    ]);
    await facts.create(alice, { content: 'Prefers dark mode', category: 'user-preferences' });

    const later = await kioku.startConversation(alice);
    const turn = await later.prepare('Find the text "invoice" inside the project files');
    expect(injected(turn)[0]).toContain(
      `- [${fact!.id}] (anti-patterns/file-operations, assistant): Don't use search_files for content search — instead use grep`,
    );
    expect(injected(turn)[0]).not.toContain('dark mode');
  });
});

describe('factRecall — tools', () => {
  it('saves, searches, lists categories and deletes in the user’s scope', async () => {
    const { facts, kioku } = setup();
    await facts.create(bob, { content: 'Bob prefers coffee', category: 'user-preferences' });
    const convo = await kioku.startConversation(alice);
    expect(convo.tools.map((t) => t.function.name)).toEqual([
      'save_memory',
      'search_memory',
      'delete_memory',
      'list_memory_categories',
    ]);
    const saveDescription = convo.tools[0]!.function.description;
    expect(saveDescription).toContain('anti-patterns/<domain>');

    await convo.run(
      'remember things',
      scriptedModel([
        callTools(
          ['save_memory', { content: 'Prefers tea', category: 'user-preferences/drinks', tags: ['drinks'] }],
          ['save_memory', { content: 'Prefers green tea in the morning', category: 'user-preferences' }],
          [
            'save_memory',
            { content: "Don't email before 9am — instead schedule", category: 'anti-patterns/email' },
          ],
          ['save_memory', { content: 'Tea supplier is in Kyoto' }],
        ),
        answer(),
      ]),
    );
    const all = await facts.list(alice);
    expect(all).toHaveLength(4);
    expect(
      all.every((f) => f.provenance.source === 'assistant' && f.provenance.sessionId === convo.sessionId),
    ).toBe(true);
    const tea = all.find((f) => f.content === 'Prefers tea')!;

    const result = await convo.run(
      'look things up',
      scriptedModel([
        callTools(
          ['search_memory', { query: 'tea' }],
          ['search_memory', { query: 'tea', category: 'user-preferences' }],
          ['search_memory', { query: 'tea', tags: ['drinks'] }],
          ['search_memory', { query: 'coffee' }],
          ['list_memory_categories', {}],
        ),
        answer(),
      ]),
    );
    const [any, byCategory, byTag, coffee, categories] = toolResults(result.messages).map(
      (r) => ('ok' in r ? r.ok : r.error) as string,
    );
    const hits = JSON.parse(any!) as {
      id: string;
      category: string;
      tags: string[];
      content: string;
      score: number;
    }[];
    expect(hits.map((h) => h.content).sort()).toEqual([
      'Prefers green tea in the morning',
      'Prefers tea',
      'Tea supplier is in Kyoto',
    ]);
    expect(hits.find((h) => h.id === tea.id)).toEqual({
      id: tea.id,
      category: 'user-preferences/drinks',
      tags: ['drinks'],
      content: 'Prefers tea',
      source: 'assistant',
      score: expect.any(Number),
    });
    expect(hits.every((h) => h.score > 0)).toBe(true);
    expect((JSON.parse(byCategory!) as { content: string }[]).map((h) => h.content).sort()).toEqual([
      'Prefers green tea in the morning',
      'Prefers tea',
    ]);
    expect((JSON.parse(byTag!) as { id: string }[]).map((h) => h.id)).toEqual([tea.id]);
    expect(JSON.parse(coffee!)).toEqual([]); // Bob's coffee stays Bob's
    expect(categories).toBe(
      [
        'anti-patterns (1)',
        '  anti-patterns/email (1)',
        'general (1)',
        'user-preferences (2)',
        '  user-preferences/drinks (1)',
      ].join('\n'),
    );

    const removed = await convo.run(
      'forget tea',
      scriptedModel([callTools(['delete_memory', { id: tea.id }]), answer()]),
    );
    expect(toolResults(removed.messages)).toEqual([{ ok: `Deleted memory ${tea.id}.` }]);
    expect(await facts.get(alice, tea.id)).toBeNull();
  });

  it('returns bad arguments and unknown ids to the model as errors and changes nothing', async () => {
    const { facts, kioku } = setup();
    await facts.create(alice, { content: 'Prefers tea' });
    const bobs = await facts.create(bob, { content: 'Bob prefers coffee' });
    const before = { alice: await facts.list(alice), bob: await facts.list(bob) };
    const convo = await kioku.startConversation(alice);
    const result = await convo.run(
      'break things',
      scriptedModel([
        callTools(
          ['save_memory', { content: 12 }],
          ['save_memory', { content: '   ' }],
          ['save_memory', { content: 'x', category: 'a//b' }],
          ['save_memory', { content: 'x', tags: 'not-a-list' }],
          ['search_memory', {}],
          ['search_memory', { query: 'tea', category: '../../etc' }],
          ['search_memory', { query: 'x'.repeat(5_000) }],
          ['delete_memory', { id: 'missing' }],
          ['delete_memory', { id: bobs.id }],
          ['delete_memory', { id: ['a'] }],
          ['list_memory_categories', '{'],
        ),
        answer(),
      ]),
    );
    expect(toolResults(result.messages).map((r) => ('error' in r ? r.error : 'ok'))).toEqual([
      'VALIDATION',
      'VALIDATION',
      'VALIDATION',
      'VALIDATION',
      'VALIDATION',
      'VALIDATION',
      'VALIDATION',
      'NOT_FOUND',
      'NOT_FOUND',
      'VALIDATION',
      'INVALID_JSON',
    ]);
    expect(await facts.list(alice)).toEqual(before.alice);
    expect(await facts.list(bob)).toEqual(before.bob);
  });

  it('shares one delete_memory tool with mode all over the same store', async () => {
    const facts = new InMemoryFactStore();
    const sessions = new InMemorySessionStore();
    const dynamic = allFacts({ store: facts });
    const longTerm = factRecall({ store: facts, sessions });
    const del = (f: typeof dynamic) => f.toolkit!.tools.find((t) => t.name === 'delete_memory');
    expect(del(dynamic)).toBeDefined();
    expect(del(dynamic)).toBe(del(longTerm));

    const kioku = new KiokuBuilder({ stores: bundleWith({ sessions }) }).use(dynamic).use(longTerm).build();
    const convo = await kioku.startConversation(alice);
    expect(convo.tools.filter((t) => t.function.name === 'delete_memory')).toHaveLength(1);
    const fact = await facts.create(alice, { title: 'Drink', content: 'Prefers tea' });
    const before = await convo.prepare('tea?');
    expect(injected(before, false).join('\n')).toContain(
      `[DYNAMIC_MEMORY]\n- [${fact.id}] (user) Drink: Prefers tea`,
    );
    // Shown once: recall skips what the every-fact block already holds.
    expect(injected(before, false).join('\n')).not.toContain(`- [${fact.id}] (general, user): Prefers tea`);
    await convo.run('forget it', scriptedModel([callTools(['delete_memory', { id: fact.id }]), answer()]));
    expect(injected(await convo.prepare('tea?'), false)).toEqual([]);

    // Over different stores the two delete_memory tools would be ambiguous: refused up front.
    const otherStore: FactStore = new InMemoryFactStore();
    const mixed = new KiokuBuilder({ stores: bundleWith({ sessions }) })
      .use(allFacts({ store: facts }))
      .use(factRecall({ store: otherStore, sessions }))
      .build();
    await expect(mixed.startConversation(alice)).rejects.toMatchObject({ code: 'VALIDATION' });
  });
});

describe('factRecall beside mode all on one fact store', () => {
  it('does not inject a fact the every-fact block already holds this turn', async () => {
    const facts = new InMemoryFactStore();
    const sessions = new InMemorySessionStore();
    const tea = await facts.create(alice, { content: 'Alice drinks green tea every morning' });
    // Mode all, then recall, over the same store.
    const kioku = new KiokuBuilder({ stores: bundleWith({ sessions, facts }), budget: { maxTokens: 16_000 } })
      .withFacts()
      .withFacts({ mode: 'recall' })
      .build();
    const turn = await (await kioku.startConversation(alice)).prepare('What tea does Alice drink?');
    const prompt = turn.messages.map((m) => m.content).join('\n');
    expect(prompt.split('green tea every morning')).toHaveLength(2); // exactly once
    expect(entryOf(turn, 'fact-recall').dropped).toContainEqual({
      id: tea.id,
      reason: 'already-injected',
    });
    expect(entryOf(turn, 'fact-recall').included).toBe(0);
  });
});
