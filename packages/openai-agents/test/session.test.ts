import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInMemoryStores, KiokuBuilder, type KiokuStores } from '@kioku/core';
import { LIMITS } from '@kioku/core/store';
import { createJsonStores } from '@kioku/store-json';
import type { AgentInputItem } from '@openai/agents';
import { afterEach, describe, expect, it } from 'vitest';
import { ITEM_KEY_PREFIX, KiokuSession } from '../src/index.js';
import { assistantMessage, functionCall } from './support/scripted-model.js';

const user = (text: string): AgentInputItem => ({ role: 'user', content: text });
const result = (callId: string, output: string): AgentInputItem => ({
  type: 'function_call_result',
  name: 'lookup',
  callId,
  status: 'completed',
  output: { type: 'text', text: output },
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const backends: [string, (kvCap?: number) => Promise<KiokuStores>][] = [
  ['in-memory stores', async (kvCap) => createInMemoryStores(kvCap ? { sessions: { kvCap } } : {})],
  [
    'JSON file stores',
    async (kvCap) => {
      const directory = await mkdtemp(join(tmpdir(), 'kioku-agents-'));
      cleanups.push(() => rm(directory, { recursive: true, force: true }));
      const stores = createJsonStores({ directory, ...(kvCap ? { sessions: { kvCap } } : {}) });
      await stores.setup();
      return stores;
    },
  ],
];

describe.each(backends)('KiokuSession over %s', (_name, makeStores) => {
  async function sessionFor(userId: string, kvCap?: number) {
    const stores = await makeStores(kvCap);
    const kioku = new KiokuBuilder({ stores }).build();
    const conversation = await kioku.startConversation({ userId });
    return { stores, conversation, session: new KiokuSession({ conversation, sessions: stores.sessions }) };
  }

  it('keeps items in order, returns the last `limit`, pops the newest and clears', async () => {
    const { session, conversation } = await sessionFor('alice');
    expect(await session.getSessionId()).toBe(conversation.sessionId);
    expect(await session.getItems()).toEqual([]);
    const items = [user('one'), assistantMessage('two'), user('three'), assistantMessage('four')];
    await session.addItems(items.slice(0, 2));
    await session.addItems(items.slice(2));
    expect(await session.getItems()).toEqual(items);
    expect(await session.getItems(2)).toEqual(items.slice(2));
    expect(await session.getItems(0)).toEqual([]);
    expect(await session.popItem()).toEqual(items[3]);
    expect(await session.getItems()).toEqual(items.slice(0, 3));
    await session.clearSession();
    expect(await session.getItems()).toEqual([]);
    expect(await session.popItem()).toBeUndefined();
  });

  it('records each finished turn in the transcript, which clearing the items leaves alone', async () => {
    const { session, conversation, stores } = await sessionFor('alice');
    await session.addItems([user('Look it up')]);
    await session.addItems([functionCall('lookup', { q: 'x' }, 'call_1'), result('call_1', 'found')]);
    const read = () => stores.sessions.transcriptReadLast({ userId: 'alice' }, conversation.sessionId, 20);
    // The turn has not ended yet: nothing recorded.
    expect(await read()).toEqual([]);
    await session.addItems([assistantMessage('Found it.')]);
    await session.clearSession();
    const transcript = await read();
    expect(transcript.map((t) => [t.role, t.content])).toEqual([
      ['user', 'Look it up'],
      ['assistant', ''],
      ['tool', 'found'],
      ['assistant', 'Found it.'],
    ]);
    expect(transcript[1]!.toolCalls).toEqual([{ id: 'call_1', name: 'lookup', arguments: '{"q":"x"}' }]);
  });

  it('keeps each user’s items in their own session', async () => {
    const stores = await makeStores();
    const kioku = new KiokuBuilder({ stores }).build();
    const alice = await kioku.startConversation({ userId: 'alice' });
    const bob = await kioku.startConversation({ userId: 'bob' });
    await new KiokuSession({ conversation: alice, sessions: stores.sessions }).addItems([user('secret')]);
    expect(await new KiokuSession({ conversation: bob, sessions: stores.sessions }).getItems()).toEqual([]);
    await expect(stores.sessions.kvList({ userId: 'bob' }, alice.sessionId)).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });

  it('refuses an item over the session value limit and stores none of the batch', async () => {
    const { session } = await sessionFor('alice');
    const huge = user('x'.repeat(LIMITS.sessionValueChars));
    await expect(session.addItems([user('before'), huge])).rejects.toMatchObject({ code: 'VALIDATION' });
    expect(await session.getItems()).toEqual([]);
  });

  it('keeps the newest items within the k-v cap and drops results whose call was evicted', async () => {
    const { session, conversation, stores } = await sessionFor('alice', 4);
    await session.addItems([
      user('q'),
      functionCall('lookup', {}, 'call_1'),
      result('call_1', 'r1'),
      functionCall('lookup', {}, 'call_2'),
      result('call_2', 'r2'),
      assistantMessage('done'),
    ]);
    const kept = await stores.sessions.kvList({ userId: 'alice' }, conversation.sessionId);
    expect(kept.filter((e) => e.key.startsWith(ITEM_KEY_PREFIX))).toHaveLength(4);
    // The cap evicted the question and call_1; call_1's result is not replayed without it.
    expect(await session.getItems()).toEqual([
      functionCall('lookup', {}, 'call_2'),
      result('call_2', 'r2'),
      assistantMessage('done'),
    ]);
    expect(await session.getItems(2)).toEqual([assistantMessage('done')]);
  });
});
