import { describe, expect, it } from 'vitest';
import { type ChatMessage, createInMemoryStores, KiokuBuilder, type KiokuStores } from '../src/index.js';

const TURN: ChatMessage[] = [
  { role: 'user', content: 'I live in Porto.' },
  { role: 'assistant', content: 'A lovely city!' },
];

/** A slow backend: the named session call waits until `release()` (then does its work, whole). */
function slowSessions(stores: KiokuStores, method: 'transcriptReadLast' | 'transcriptAppend') {
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  let entered!: () => void;
  const called = new Promise<void>((r) => {
    entered = r;
  });
  const sessions = stores.sessions;
  const original = sessions[method].bind(sessions) as (...args: unknown[]) => Promise<unknown>;
  const slow = new Proxy(sessions, {
    get(target, key) {
      if (key !== method) {
        const value = Reflect.get(target, key, target);
        return typeof value === 'function' ? value.bind(target) : value;
      }
      return async (...args: unknown[]) => {
        entered();
        await gate;
        return original(...args);
      };
    },
  });
  return { stores: { ...stores, sessions: slow } as KiokuStores, release, called };
}

async function conversation(stores: KiokuStores) {
  const kioku = new KiokuBuilder({ stores }).withMemory().build();
  const convo = await kioku.startConversation({ userId: 'alice' });
  return convo;
}

describe('AbortSignal on store calls', () => {
  it('prepare with an aborted signal fails at its first store call with ABORTED, naming it', async () => {
    const convo = await conversation(createInMemoryStores());
    const signal = AbortSignal.abort(new Error('client went away'));
    const error = await convo.prepare('hello', { signal }).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'AbortedError', code: 'ABORTED' });
    expect((error as { details: { operation: string } }).details.operation).toMatch(/^\w+\.\w+$/);
  });

  it('a signal aborted while prepare waits on the store rejects at once, without waiting for it', async () => {
    const base = createInMemoryStores();
    const convo = await conversation(base);
    await convo.record(TURN);
    const slow = slowSessions(base, 'transcriptReadLast');
    const slowConvo = await (
      await new KiokuBuilder({ stores: slow.stores }).withMemory().build()
    ).resumeConversation({ userId: 'alice' }, convo.sessionId);
    const controller = new AbortController();
    const prepared = slowConvo.prepare('where do I live?', { signal: controller.signal });
    await slow.called;
    controller.abort();
    await expect(prepared).rejects.toMatchObject({
      code: 'ABORTED',
      details: { operation: 'sessions.transcriptReadLast' },
    });
    slow.release();
  });

  it('record aborted mid-append: the transcript has the turn whole or not at all; a retry with its turnId stores it once', async () => {
    const base = createInMemoryStores();
    const slow = slowSessions(base, 'transcriptAppend');
    const convo = await conversation(slow.stores);
    const controller = new AbortController();
    const recorded = convo.record(TURN, { turnId: 'turn-1', signal: controller.signal });
    await slow.called;
    controller.abort();
    await expect(recorded).rejects.toMatchObject({
      code: 'ABORTED',
      details: { operation: 'sessions.transcriptAppend' },
    });
    const entries = () => base.sessions.transcriptReadLast({ userId: 'alice' }, convo.sessionId, 100);
    expect(await entries()).toEqual([]); // not applied yet
    slow.release(); // the backend finishes the call it was sent: whole
    await new Promise((r) => setTimeout(r, 0));
    await convo.record(TURN, { turnId: 'turn-1' });
    expect((await entries()).map((e) => e.content)).toEqual(TURN.map((m) => m.content));
  });

  it('record with an aborted signal writes nothing', async () => {
    const stores = createInMemoryStores();
    const convo = await conversation(stores);
    await expect(convo.record(TURN, { signal: AbortSignal.abort() })).rejects.toMatchObject({
      code: 'ABORTED',
    });
    expect(await stores.sessions.transcriptReadLast({ userId: 'alice' }, convo.sessionId, 100)).toEqual([]);
  });
});
