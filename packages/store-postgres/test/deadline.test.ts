import { createServer, type Server, type Socket } from 'node:net';
import { isKiokuError, StorageError } from '@kioku/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStores, isRetryablePostgresError } from '../src/index.js';

/** A server that accepts connections and never answers: a PostgreSQL that hangs (or a black hole). */
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

describe('a store call past its deadline', () => {
  let silent: Awaited<ReturnType<typeof silentServer>>;
  beforeAll(async () => {
    silent = await silentServer();
  });
  afterAll(async () => {
    for (const socket of silent.sockets) socket.destroy();
    await new Promise((resolve) => silent.server.close(resolve));
  });

  it('fails with a retryable StorageError instead of hanging, on a server that never answers', async () => {
    const stores = createPostgresStores({
      url: `postgres://kioku@127.0.0.1:${silent.port}/kioku`,
      deadlineMs: 300,
    });
    try {
      const error = await stores.facts.list({ userId: 'alice' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StorageError);
      expect(error).toMatchObject({ code: 'STORAGE', retryable: true });
      expect((error as Error).message).toMatch(/did not answer/);
    } finally {
      await stores.close();
    }
  });

  it('a refused connection is retryable too; a wrong value is not', async () => {
    // A port nothing listens on: the closed silent server's neighbour is not guaranteed free, so take one.
    const closed = await silentServer();
    await new Promise((resolve) => closed.server.close(resolve));
    const stores = createPostgresStores({ url: `postgres://kioku@127.0.0.1:${closed.port}/kioku` });
    try {
      const error = await stores.facts.list({ userId: 'alice' }).catch((e: unknown) => e);
      expect(isKiokuError(error, 'STORAGE') && (error as StorageError).retryable).toBe(true);
    } finally {
      await stores.close();
    }
    expect(isRetryablePostgresError(Object.assign(new Error('x'), { code: '22P02' }))).toBe(false);
    expect(isRetryablePostgresError(Object.assign(new Error('x'), { code: '57P01' }))).toBe(true);
    expect(() => createPostgresStores({ url: 'postgres://x@127.0.0.1/x', deadlineMs: 0 })).toThrow(
      /deadlineMs/,
    );
  });
});
