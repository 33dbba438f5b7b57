import { describe, expect, it } from 'vitest';
import {
  type ChatMessage,
  type ChatModel,
  type Conversation,
  defaultTokenizer,
  KiokuBuilder,
  type PreparedTurn,
  workingMemory,
} from '../../src/index.js';
import type { WorkingMemoryFeatureOptions } from '../../src/memory/working/feature.js';
import {
  formatRemaining,
  OWN_INVENTORY_HEADER,
  PATROL_FINDINGS_HEADER,
} from '../../src/memory/working/format.js';
import { patrolNamespace, subagentNamespace } from '../../src/memory/working/namespace.js';
import { countMessagesTokens } from '../../src/model/messages.js';
import { acquireLease, leaseKey } from '../../src/runtime/lease.js';
import { InMemorySessionStore } from '../../src/store/sessions/memory.js';
import { InMemoryWorkingMemoryStore } from '../../src/store/working/memory.js';
import { ManualClock } from '../../src/testing.js';
import { bundleWith } from '../bundle.js';

const tok = defaultTokenizer;
const MIN = 60_000;

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

/** One model step calling the given tools, then a final answer. */
function callsThenAnswer(calls: { name: string; args: unknown }[]) {
  return scriptedModel([
    {
      role: 'assistant',
      content: '',
      toolCalls: calls.map((c, i) => ({
        id: `c${i}`,
        name: c.name,
        arguments: typeof c.args === 'string' ? c.args : JSON.stringify(c.args),
      })),
    },
    { role: 'assistant', content: 'done' },
  ]);
}

function setup(
  options: Partial<WorkingMemoryFeatureOptions> = {},
  budget: { maxTokens?: number; shares?: Record<string, number> } = {},
) {
  const clock = new ManualClock();
  const store = options.store ?? new InMemoryWorkingMemoryStore({ clock });
  const kioku = new KiokuBuilder({
    stores: bundleWith({}),
    systemPrompt: 'You are an assistant.',
    budget,
    clock,
  })
    .use(workingMemory({ clock, ...options, store }))
    .build();
  return { clock, store, kioku };
}

function expectAccounted(turn: PreparedTurn): void {
  const { ledger, messages } = turn;
  expect(ledger.totalTokens).toBe(countMessagesTokens(tok, messages) + ledger.tools.tokens);
  expect(ledger.totalTokens).toBe(
    ledger.baseTokens + ledger.tools.tokens + ledger.entries.reduce((s, e) => s + e.tokens, 0),
  );
  expect(ledger.totalTokens).toBeLessThanOrEqual(ledger.maxTokens);
  for (const entry of ledger.entries) expect(entry.tokens).toBeLessThanOrEqual(entry.allottedTokens);
}

const injected = (turn: PreparedTurn) => turn.messages.slice(1, -1).map((m) => m.content);

const toolResults = (messages: ChatMessage[]) =>
  messages.filter((m) => m.role === 'tool').map((m) => m.content);

const errorCode = (content: string): string | undefined => {
  try {
    return JSON.parse(content).error?.code;
  } catch {
    return undefined;
  }
};

describe('formatRemaining', () => {
  it('prints time left in the inventory format', () => {
    expect(formatRemaining(45_000)).toBe('45s');
    expect(formatRemaining(4 * MIN + 32_000)).toBe('4m32s');
    expect(formatRemaining(2 * MIN + 1_000)).toBe('2m01s');
    expect(formatRemaining(4 * 60 * MIN + 12 * MIN + 5_000)).toBe('4h12m');
    expect(formatRemaining(3 * 24 * 60 * MIN + 4 * 60 * MIN)).toBe('3d04h');
    expect(formatRemaining(200)).toBe('1s');
  });
});

describe('workingMemory: inventory', () => {
  it('lists the session’s own entries with expiry, category and tags — never values', async () => {
    const { clock, store, kioku } = setup();
    const convo = await kioku.startConversation({ userId: 'alice' });
    const scope = convo.scope;
    const ns = `session/${convo.sessionId}`;
    await store.set(scope, `${ns}/emails_inbox`, 'SECRET-INBOX-CONTENT', {
      category: 'email',
      tags: ['inbox', 'unread'],
    });
    clock.advance(MIN);
    await store.set(scope, `${ns}/draft_reply`, 'SECRET-DRAFT', { ttlMs: 3 * MIN + 1_000 });
    clock.advance(28_000);
    const turn = await convo.prepare('What is in my inbox?');
    expect(turn.messages[1]).toEqual({
      role: 'system',
      content: [
        'Working memory (scratch space — use search_working_memory or get_from_working_memory to retrieve):',
        `- ${ns}/emails_inbox: expires in 3m32s, category: email, tags: inbox, unread`,
        `- ${ns}/draft_reply: expires in 2m33s`,
      ].join('\n'),
    });
    expect(turn.messages).toHaveLength(3); // no patrol findings yet: no second section
    expect(JSON.stringify(turn.messages)).not.toContain('SECRET');
    expect(turn.ledger.entries[0]).toMatchObject({ middleware: 'working-memory', included: 2, dropped: [] });
    expectAccounted(turn);
  });

  it('adds patrol findings in user sessions, in the inventory format', async () => {
    const { clock, store, kioku } = setup();
    const convo = await kioku.startConversation({ userId: 'alice' });
    const patrol = { userId: 'alice' };
    await store.set(patrol, 'patrol/heartbeat/latest-briefing', 'SECRET-BRIEFING', {
      ttlMs: 4 * 60 * MIN + 12 * MIN + 30_000,
      category: 'patrol-finding',
    });
    await store.set(patrol, 'patrol/heartbeat/alerts', 'SECRET-ALERTS', {
      ttlMs: 4 * 60 * MIN + 8 * MIN + 30_000,
      tags: ['urgent'],
    });
    await store.set(convo.scope, `session/${convo.sessionId}/notes`, 'SECRET-NOTES');
    clock.advance(10_000);
    const turn = await convo.prepare('Anything new?');
    expect(injected(turn)).toEqual([
      `${OWN_INVENTORY_HEADER}\n- session/${convo.sessionId}/notes: expires in 4m50s`,
      [
        PATROL_FINDINGS_HEADER,
        '- patrol/heartbeat/latest-briefing: expires in 4h12m, category: patrol-finding',
        '- patrol/heartbeat/alerts: expires in 4h08m, tags: urgent',
      ].join('\n'),
    ]);
    expect(PATROL_FINDINGS_HEADER).toBe(
      'Patrol findings in working memory (use get_from_working_memory with the full key to read):',
    );
    expect(JSON.stringify(turn.messages)).not.toContain('SECRET');
    expect(turn.ledger.entries[0]?.included).toBe(3);
    expectAccounted(turn);
  });

  it('shows a patrol session its own entries and skips the patrol findings', async () => {
    const { store, kioku } = setup({ namespace: () => patrolNamespace('heartbeat') });
    const convo = await kioku.startConversation({ userId: 'alice' });
    await store.set(convo.scope, 'patrol/heartbeat/state', 'x');
    await store.set(convo.scope, 'patrol/inbox-watch/found', 'y');
    await store.set(convo.scope, `session/${convo.sessionId}/other`, 'z');
    const turn = await convo.prepare('patrol run');
    expect(injected(turn)).toEqual([`${OWN_INVENTORY_HEADER}\n- patrol/heartbeat/state: expires in 5m00s`]);
  });

  it('never shows expired entries', async () => {
    const { clock, store, kioku } = setup();
    const convo = await kioku.startConversation({ userId: 'alice' });
    const ns = `session/${convo.sessionId}`;
    await store.set(convo.scope, `${ns}/short`, 'a', { ttlMs: MIN });
    await store.set(convo.scope, `${ns}/long`, 'b', { ttlMs: 10 * MIN });
    await store.set(convo.scope, 'patrol/heartbeat/old', 'c', { ttlMs: 2 * MIN });
    clock.advance(MIN);
    const first = await convo.prepare('hi');
    expect(injected(first)).toEqual([
      `${OWN_INVENTORY_HEADER}\n- ${ns}/long: expires in 9m00s`,
      `${PATROL_FINDINGS_HEADER}\n- patrol/heartbeat/old: expires in 1m00s`,
    ]);
    clock.advance(10 * MIN);
    const later = await convo.prepare('hi again');
    expect(later.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(later.ledger.entries[0]).toMatchObject({ tokens: 0, included: 0 });
  });

  it('keeps the newest entries within the budget, drops the rest, and the ledger adds up', async () => {
    const { store, clock, kioku } = setup({}, { shares: { 'working-memory': 250 } });
    const convo = await kioku.startConversation({ userId: 'alice' });
    const ns = `session/${convo.sessionId}`;
    for (let i = 0; i < 20; i++) {
      await store.set(convo.scope, `${ns}/item_${i}`, `value ${i}`, { category: 'research', tags: ['web'] });
      clock.advance(1_000);
    }
    const turn = await convo.prepare('status?');
    expectAccounted(turn);
    const entry = turn.ledger.entries[0]!;
    expect(entry.allottedTokens).toBe(250);
    expect(entry.tokens).toBeLessThanOrEqual(250);
    expect(entry.included).toBeGreaterThan(2);
    expect(entry.included + entry.dropped.length).toBe(20);
    expect(entry.dropped.every((d) => d.reason === 'budget')).toBe(true);
    const lines = injected(turn)[0]!.split('\n').slice(1);
    expect(lines).toHaveLength(entry.included);
    // Newest kept, shown oldest first.
    const keptKeys = lines.map((l) => l.slice(2, l.indexOf(':')));
    const expected = Array.from({ length: 20 }, (_, i) => `${ns}/item_${i}`).slice(20 - entry.included);
    expect(keptKeys).toEqual(expected);
    expect(entry.dropped.map((d) => d.id).sort()).toEqual(
      Array.from({ length: 20 - entry.included }, (_, i) => `${ns}/item_${i}`).sort(),
    );
  });

  it('leaves the patrol findings out when the own inventory takes the budget', async () => {
    const clock = new ManualClock();
    const store = new InMemoryWorkingMemoryStore({ clock });
    const sessions = new InMemorySessionStore();
    const kiokuWith = (shares: Record<string, number>) =>
      new KiokuBuilder({
        stores: bundleWith({ sessions }),
        clock,
        systemPrompt: 'You are an assistant.',
        budget: { shares },
      })
        .use(workingMemory({ store, clock }))
        .build();
    const measure = await kiokuWith({}).startConversation({ userId: 'alice' });
    await store.set(measure.scope, `session/${measure.sessionId}/a`, 'x');
    await store.set(measure.scope, 'patrol/heartbeat/finding', 'y');
    const full = await measure.prepare('hi');
    expect(injected(full)).toHaveLength(2);
    const ownTokens = countMessagesTokens(tok, [full.messages[1]!]);

    // Room for the own inventory and a few tokens more, not for the patrol section.
    const kioku = kiokuWith({ 'working-memory': ownTokens + 5 });
    const convo = await kioku.resumeConversation({ userId: 'alice' }, measure.sessionId);
    const turn = await convo.prepare('hi');
    expectAccounted(turn);
    expect(injected(turn)).toEqual([full.messages[1]!.content]);
    expect(turn.ledger.entries[0]).toMatchObject({
      tokens: ownTokens,
      included: 1,
      dropped: [expect.objectContaining({ id: 'patrol/heartbeat/finding', reason: 'budget' })],
    });
  });

  it('lists at most maxListed entries per section, dropping the oldest with reason limit', async () => {
    const { store, clock, kioku } = setup({ maxListed: 2 });
    const convo = await kioku.startConversation({ userId: 'alice' });
    for (const task of ['a', 'b', 'c']) {
      await store.set(convo.scope, `patrol/${task}/finding`, 'x');
      clock.advance(1_000);
    }
    const turn = await convo.prepare('hi');
    expect(injected(turn)[0]).toBe(
      `${PATROL_FINDINGS_HEADER}\n- patrol/b/finding: expires in 4m58s\n- patrol/c/finding: expires in 4m59s`,
    );
    expect(turn.ledger.entries[0]!.dropped).toEqual([{ id: 'patrol/a/finding', reason: 'limit' }]);
  });

  it('keeps users and sessions apart', async () => {
    const { store, kioku } = setup();
    const alice = await kioku.startConversation({ userId: 'alice' });
    const bob = await kioku.startConversation({ userId: 'bob' });
    const alice2 = await kioku.startConversation({ userId: 'alice' });
    await store.set(alice.scope, `session/${alice.sessionId}/mine`, 'alice data');
    await store.set(alice.scope, 'patrol/heartbeat/for-alice', 'alice finding');
    expect((await bob.prepare('hi')).messages).toHaveLength(2);
    // Alice's other session sees the patrol findings but not the first session's scratch entries.
    expect(injected(await alice2.prepare('hi'))).toEqual([
      `${PATROL_FINDINGS_HEADER}\n- patrol/heartbeat/for-alice: expires in 5m00s`,
    ]);
  });
});

describe('workingMemory: tools', () => {
  async function started(options: Partial<WorkingMemoryFeatureOptions> = {}) {
    const ctx = setup(options);
    const convo = await ctx.kioku.startConversation({ userId: 'alice' });
    return { ...ctx, convo, ns: `session/${convo.sessionId}` };
  }

  const run = (convo: Conversation, calls: { name: string; args: unknown }[]) =>
    convo.run('go', callsThenAnswer(calls)).then((r) => toolResults(r.messages));

  it('offers the four working-memory tools', async () => {
    const { convo } = await started();
    expect(convo.tools.map((t) => t.function.name)).toEqual([
      'save_to_working_memory',
      'get_from_working_memory',
      'list_working_memory',
      'search_working_memory',
    ]);
    const save = convo.tools[0]!.function.parameters as { required?: string[]; properties: object };
    expect(save.required).toEqual(['key', 'data']);
    expect(Object.keys(save.properties)).toEqual(['key', 'data', 'ttl_minutes', 'category', 'tags']);
  });

  it('saves a plain key into the own namespace with TTL, category and tags', async () => {
    const { convo, store, clock, ns } = await started();
    const [result] = await run(convo, [
      {
        name: 'save_to_working_memory',
        args: { key: 'emails_inbox', data: '12 unread', ttl_minutes: 30, category: 'email', tags: ['inbox'] },
      },
    ]);
    expect(JSON.parse(result!)).toEqual({
      saved: `${ns}/emails_inbox`,
      expiresIn: '30m00s',
      expiresAt: new Date(clock.now() + 30 * MIN).toISOString(),
    });
    // Side channel: read the store directly.
    expect(await store.get(convo.scope, `${ns}/emails_inbox`)).toMatchObject({
      value: '12 unread',
      category: 'email',
      tags: ['inbox'],
      expiresAt: new Date(clock.now() + 30 * MIN).toISOString(),
    });
    // The next turn's inventory shows it; a nested plain key and the own full path land in the namespace too.
    await run(convo, [
      { name: 'save_to_working_memory', args: { key: 'drafts/v2', data: 'draft' } },
      { name: 'save_to_working_memory', args: { key: `${ns}/explicit`, data: 'e' } },
    ]);
    expect((await store.list(convo.scope)).map((e) => e.key)).toEqual([
      `${ns}/emails_inbox`,
      `${ns}/drafts/v2`,
      `${ns}/explicit`,
    ]);
    const turn = await convo.prepare('next');
    expect(turn.messages[1]?.content).toBe(
      [
        OWN_INVENTORY_HEADER,
        `- ${ns}/emails_inbox: expires in 30m00s, category: email, tags: inbox`,
        `- ${ns}/drafts/v2: expires in 5m00s`,
        `- ${ns}/explicit: expires in 5m00s`,
      ].join('\n'),
    );
  });

  it('refuses writes into another namespace and writes nothing', async () => {
    const { convo, store, ns } = await started();
    const other = await convo.run(
      'go',
      callsThenAnswer([
        { name: 'save_to_working_memory', args: { key: 'patrol/heartbeat/latest', data: 'forged' } },
        { name: 'save_to_working_memory', args: { key: 'session/someone-else/notes', data: 'forged' } },
        { name: 'save_to_working_memory', args: { key: 'subagent/t1/result', data: 'forged' } },
      ]),
    );
    const results = toolResults(other.messages);
    expect(results.map(errorCode)).toEqual(['SCOPE', 'SCOPE', 'SCOPE']);
    expect(JSON.parse(results[0]!).error.message).toBe(
      `Working memory writes go to your own namespace "${ns}"; "patrol/heartbeat/latest" is in ` +
        `"patrol/heartbeat". Use a plain key such as "latest" (saved as "${ns}/latest").`,
    );
    expect(await store.list(convo.scope)).toEqual([]);
  });

  it('returns bad arguments to the model as errors and writes nothing', async () => {
    const { convo, store } = await started();
    const results = await run(convo, [
      { name: 'save_to_working_memory', args: { key: 'x' } },
      { name: 'save_to_working_memory', args: { key: 'x', data: 'd', ttl_minutes: -5 } },
      { name: 'save_to_working_memory', args: { key: 'x', data: 'd', ttl_minutes: 60 * 24 * 31 } },
      { name: 'save_to_working_memory', args: { key: 'x', data: 'd', category: '../etc' } },
      { name: 'save_to_working_memory', args: { key: '../../etc/passwd', data: 'd' } },
      { name: 'save_to_working_memory', args: '{"key": "x", "data": ' },
      { name: 'get_from_working_memory', args: {} },
      { name: 'list_working_memory', args: { namespace: '../x' } },
      { name: 'search_working_memory', args: { tags: 'urgent' } },
    ]);
    expect(results.map(errorCode)).toEqual([
      'VALIDATION',
      'VALIDATION',
      'VALIDATION',
      'VALIDATION',
      'VALIDATION',
      'INVALID_JSON',
      'VALIDATION',
      'VALIDATION',
      'VALIDATION',
    ]);
    expect(await store.list(convo.scope)).toEqual([]);
  });

  it('reads a plain key from the own namespace and a full key from another', async () => {
    const { convo, store, ns } = await started();
    await store.set(convo.scope, `${ns}/notes`, 'my notes');
    await store.set(convo.scope, 'subagent/t1/research_results', 'subagent findings');
    const results = await run(convo, [
      { name: 'get_from_working_memory', args: { key: 'notes' } },
      { name: 'get_from_working_memory', args: { key: 'subagent/t1/research_results' } },
      { name: 'get_from_working_memory', args: { key: 'missing' } },
    ]);
    expect(results.slice(0, 2)).toEqual(['my notes', 'subagent findings']);
    expect(errorCode(results[2]!)).toBe('NOT_FOUND');
    expect(JSON.parse(results[2]!).error.message).toContain(`${ns}/missing`);
  });

  it('does not read expired entries', async () => {
    const { convo, store, clock, ns } = await started();
    await store.set(convo.scope, `${ns}/brief`, 'short-lived', { ttlMs: MIN });
    clock.advance(MIN);
    const [result] = await run(convo, [{ name: 'get_from_working_memory', args: { key: 'brief' } }]);
    expect(errorCode(result!)).toBe('NOT_FOUND');
  });

  it('lists the own namespace or another prefix, without values', async () => {
    const { convo, store, clock, ns } = await started();
    await store.set(convo.scope, `${ns}/a`, 'SECRET-A', { category: 'email' });
    await store.set(convo.scope, 'patrol/heartbeat/b', 'SECRET-B', { tags: ['urgent'], ttlMs: 60 * MIN });
    clock.advance(30_000);
    const results = await run(convo, [
      { name: 'list_working_memory', args: {} },
      { name: 'list_working_memory', args: { namespace: 'patrol' } },
      { name: 'list_working_memory', args: { namespace: 'subagent/none' } },
    ]);
    expect(results).toEqual([
      `Working memory under "${ns}":\n- ${ns}/a: expires in 4m30s, category: email`,
      'Working memory under "patrol":\n- patrol/heartbeat/b: expires in 59m30s, tags: urgent',
      'No entries in working memory under "subagent/none".',
    ]);
  });

  it('searches by words, category and tags, in the own namespace unless told otherwise', async () => {
    const { convo, store, ns } = await started();
    await store.set(convo.scope, `${ns}/weather`, 'Rain expected in Chicago tomorrow', {
      category: 'research',
    });
    await store.set(convo.scope, `${ns}/stocks`, 'Markets closed higher', { category: 'finance' });
    await store.set(convo.scope, 'patrol/heartbeat/alert', 'Chicago server down', { tags: ['urgent'] });
    const results = await run(convo, [
      { name: 'search_working_memory', args: { query: 'Chicago rain' } },
      { name: 'search_working_memory', args: { category: 'finance' } },
      { name: 'search_working_memory', args: { query: 'Chicago', tags: ['urgent'], namespace: 'patrol' } },
      { name: 'search_working_memory', args: { query: 'nothing matches this' } },
    ]);
    // Best match first (lower-ranked matches may follow).
    expect(results[0]!.split('\n').slice(0, 2).join('\n')).toBe(
      `- ${ns}/weather: expires in 5m00s, category: research\n  Rain expected in Chicago tomorrow`,
    );
    expect(results[1]).toBe(`- ${ns}/stocks: expires in 5m00s, category: finance\n  Markets closed higher`);
    expect(results[2]).toBe(
      '- patrol/heartbeat/alert: expires in 5m00s, tags: urgent\n  Chicago server down',
    );
    expect(results[3]).toBe(`No matching entries in working memory under "${ns}".`);
  });

  it('cannot reach another user’s entries, even by full key', async () => {
    const { kioku, store } = setup();
    const alice = await kioku.startConversation({ userId: 'alice' });
    const bob = await kioku.startConversation({ userId: 'bob' });
    const key = `session/${alice.sessionId}/secret`;
    await store.set(alice.scope, key, 'alice secret');
    await store.set(alice.scope, 'patrol/heartbeat/x', 'alice patrol');
    const results = await run(bob, [
      { name: 'get_from_working_memory', args: { key } },
      { name: 'list_working_memory', args: { namespace: 'patrol' } },
      { name: 'search_working_memory', args: { query: 'secret', namespace: 'session' } },
    ]);
    expect(errorCode(results[0]!)).toBe('NOT_FOUND');
    expect(results[1]).toBe('No entries in working memory under "patrol".');
    expect(results[2]).toBe('No matching entries in working memory under "session".');
  });

  it('writes a subagent’s entries to its own namespace, which the parent session can read', async () => {
    const clock = new ManualClock();
    const store = new InMemoryWorkingMemoryStore({ clock });
    const sessions = new InMemorySessionStore();
    const sub = new KiokuBuilder({
      stores: bundleWith({ sessions }),
      clock,
      systemPrompt: 'You are a research subagent.',
    })
      .use(workingMemory({ store, clock, namespace: () => subagentNamespace('t1') }))
      .build();
    const main = new KiokuBuilder({
      stores: bundleWith({ sessions }),
      clock,
      systemPrompt: 'You are an assistant.',
    })
      .use(workingMemory({ store, clock }))
      .build();
    const subConvo = await sub.startConversation({ userId: 'alice' });
    await run(subConvo, [
      { name: 'save_to_working_memory', args: { key: 'research_results', data: 'found it' } },
    ]);
    expect(await store.get({ userId: 'alice' }, 'subagent/t1/research_results')).toMatchObject({
      value: 'found it',
    });
    // A subagent is not a user session: its prompt has no patrol findings section.
    await store.set({ userId: 'alice' }, 'patrol/heartbeat/x', 'p');
    expect(injected(await subConvo.prepare('again'))).toEqual([
      `${OWN_INVENTORY_HEADER}\n- subagent/t1/research_results: expires in 5m00s`,
    ]);
    const parent = await main.startConversation({ userId: 'alice' });
    const [value] = await run(parent, [
      { name: 'get_from_working_memory', args: { key: 'subagent/t1/research_results' } },
    ]);
    expect(value).toBe('found it');
  });

  it('a save of a key the model read is checked against what it read: a change made since is CONFLICT, shown, and kept', async () => {
    const { convo, store, ns } = await started();
    const key = `${ns}/todo`;
    await store.set(convo.scope, key, 'milk');
    const script = callsThenAnswer([{ name: 'get_from_working_memory', args: { key: 'todo' } }]);
    const first = await convo.run('what is on the list?', script);
    expect(toolResults(first.messages)).toEqual(['milk']);
    // Another app instance adds to the list while the model works on what it read.
    const edit = callsThenAnswer([
      { name: 'save_to_working_memory', args: { key: 'todo', data: 'milk, eggs' } },
      { name: 'save_to_working_memory', args: { key: 'todo', data: 'milk, bread, eggs' } },
    ]);
    const model: ChatModel = {
      async complete(request) {
        if (edit.prompts.length === 0) await store.set(convo.scope, key, 'milk, bread');
        return edit.complete(request);
      },
    };
    const second = await convo.run('add eggs', model);
    const [conflict, retried] = toolResults(second.messages);
    expect(errorCode(conflict!)).toBe('CONFLICT');
    expect(JSON.parse(conflict!).error.message).toContain('"milk, bread"');
    expect(JSON.parse(retried!)).toMatchObject({ saved: key });
    expect(await store.get(convo.scope, key)).toMatchObject({ value: 'milk, bread, eggs', version: 3 });
    // A key the model never read is simply written.
    const blind = await run(convo, [{ name: 'save_to_working_memory', args: { key: 'fresh', data: 'x' } }]);
    expect(JSON.parse(blind[0]!)).toMatchObject({ saved: `${ns}/fresh` });
  });

  it('refuses every key and prefix under kioku/ with VALIDATION and changes nothing: a model cannot take or break a lease', async () => {
    const { convo, store, clock } = await started();
    const lease = await acquireLease(store, convo.scope, 'dream', {
      ttlMs: 10 * MIN,
      holder: 'instance-1',
      clock,
    });
    const before = await store.get(convo.scope, leaseKey('dream'));
    const results = await run(convo, [
      { name: 'save_to_working_memory', args: { key: 'kioku/dream/lease', data: '{"holder":"model"}' } },
      { name: 'save_to_working_memory', args: { key: 'kioku/extract/lease', data: 'x' } },
      { name: 'save_to_working_memory', args: { key: 'kioku', data: 'x' } },
      { name: 'get_from_working_memory', args: { key: 'kioku/dream/lease' } },
      { name: 'list_working_memory', args: { namespace: 'kioku' } },
      { name: 'list_working_memory', args: { namespace: 'kioku/dream' } },
      { name: 'search_working_memory', args: { query: 'holder', namespace: 'kioku' } },
    ]);
    expect(results.map(errorCode)).toEqual(Array(7).fill('VALIDATION'));
    expect(JSON.parse(results[3]!).error.message).toContain('reserved');
    expect(results.join('\n')).not.toContain('instance-1');
    expect(await store.get(convo.scope, leaseKey('dream'))).toEqual(before);
    expect((await store.list(convo.scope)).map((e) => e.key)).toEqual([leaseKey('dream')]);
    const turn = await convo.prepare('next');
    expect(turn.messages.map((m) => m.content).join('\n')).not.toContain('kioku/');
    expect(await lease!.renew()).toBe(true);
  });

  it('refuses an own namespace or a patrol prefix under kioku/', async () => {
    const { kioku } = setup({ namespace: () => 'kioku/dream' });
    const convo = await kioku.startConversation({ userId: 'alice' });
    await expect(convo.prepare('hi')).rejects.toMatchObject({ code: 'VALIDATION' });
    expect(() => workingMemory({ store: new InMemoryWorkingMemoryStore(), patrolPrefix: 'kioku' })).toThrow(
      expect.objectContaining({ code: 'VALIDATION' }),
    );
  });

  it('rejects a namespace function that does not return two segments', async () => {
    const { kioku } = setup({ namespace: () => 'just-one' });
    const convo = await kioku.startConversation({ userId: 'alice' });
    await expect(convo.prepare('hi')).rejects.toMatchObject({ code: 'VALIDATION' });
  });
});
