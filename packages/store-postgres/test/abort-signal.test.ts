import { createServer, type Server, type Socket } from 'node:net';
import { type ChatMessage, Conversation, KiokuBuilder } from '@kioku/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStores } from '../src/index.js';
import { dropSchema, freshSchema, noServer, pgUrl } from './helpers.js';

const TURN: ChatMessage[] = [
  { role: 'user', content: 'I live in Porto.' },
  { role: 'assistant', content: 'A lovely city!' },
];

/** A server that accepts connections and never answers: a PostgreSQL that hangs. */
function silentServer(): Promise<{ server: Server; port: number; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve({ server, port: (server.address() as { port: number }).port, sockets });
    });
  });
}

describe('a turn whose AbortSignal fires while it waits on PostgreSQL', () => {
  let silent: Awaited<ReturnType<typeof silentServer>>;
  beforeAll(async () => {
    silent = await silentServer();
  });
  afterAll(async () => {
    for (const socket of silent.sockets) socket.destroy();
    await new Promise((resolve) => silent.server.close(resolve));
  });

  it('prepare stops waiting on a server that never answers: ABORTED, long before the deadline', async () => {
    // A deadline far beyond the test's own timeout: only the signal can end the wait.
    const stores = createPostgresStores({
      url: `postgres://kioku@127.0.0.1:${silent.port}/kioku`,
      deadlineMs: 600_000,
    });
    try {
      const kioku = new KiokuBuilder({ stores }).withMemory().build();
      const convo = new Conversation({
        scope: { userId: 'alice', threadId: '0193c5a0-0000-7000-8000-000000000001' },
        sessions: kioku.stores.sessions,
        features: kioku.features,
      });
      const controller = new AbortController();
      const prepared = convo.prepare('where do I live?', { signal: controller.signal });
      setTimeout(() => controller.abort(new Error('client went away')), 50);
      await expect(prepared).rejects.toMatchObject({ name: 'AbortedError', code: 'ABORTED' });
    } finally {
      await stores.close();
    }
  });

  it.skipIf(noServer)(
    'record aborted at once: the turn is stored whole or not at all; a retry with its turnId stores it once',
    async () => {
      const schema = freshSchema();
      const stores = createPostgresStores({
        url: pgUrl,
        schema,
        clientOptions: { max: 2, onnotice: () => {} },
      });
      try {
        await stores.setup();
        const kioku = new KiokuBuilder({ stores }).withMemory().build();
        const convo = await kioku.startConversation({ userId: 'alice' });
        const controller = new AbortController();
        const recorded = convo.record(TURN, { turnId: 'turn-1', signal: controller.signal });
        controller.abort();
        await expect(recorded).rejects.toMatchObject({ code: 'ABORTED' });
        const read = () => stores.sessions.transcriptReadLast({ userId: 'alice' }, convo.sessionId, 100);
        expect([0, TURN.length]).toContain((await read()).length);
        await convo.record(TURN, { turnId: 'turn-1' });
        expect((await read()).map((e) => e.content)).toEqual(TURN.map((m) => m.content));
      } finally {
        await stores.close();
        await dropSchema(schema);
      }
    },
  );
});
