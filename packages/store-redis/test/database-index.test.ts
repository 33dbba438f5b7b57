import { StorageError } from '@kioku/core';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createRedisStores } from '../src/index.js';
import { deletePrefix, freshPrefix, keysUnder, noServer, redisUrl } from './helpers.js';

/** The URL of this run's server with another database index in its path. */
function withDatabase(index: number): string {
  const url = new URL(redisUrl);
  url.pathname = `/${index}`;
  return url.toString();
}

describe.skipIf(noServer)('a database index the server does not have', () => {
  const prefixes: string[] = [];
  afterAll(async () => {
    for (const prefix of prefixes) await deletePrefix(prefix);
  });

  it('is refused with a StorageError naming the URL and the server’s `databases`, and nothing lands in db 0', async () => {
    const admin = new Redis(redisUrl);
    const databases = Number(((await admin.config('GET', 'databases')) as string[])[1]);
    await admin.quit();
    const url = withDatabase(databases + 83);
    const prefix = freshPrefix();
    prefixes.push(prefix);
    const stores = createRedisStores({ url, prefix });
    try {
      const setup = await stores.setup().catch((error: unknown) => error);
      expect(setup).toBeInstanceOf(StorageError);
      const message = (setup as Error).message;
      expect(message).toContain(url.replace(/\/$/, ''));
      expect(message).toContain(`database ${databases + 83}`);
      expect(message).toContain(`${databases} databases`);
      const write = await stores.facts
        .create({ userId: 'alice' }, { content: 'written to the wrong database' })
        .catch((error: unknown) => error);
      expect(write).toBeInstanceOf(StorageError);
    } finally {
      await stores.close();
    }
    // db 0 (the run's server as the tests reach it) holds nothing under the prefix.
    expect(await keysUnder(prefix)).toEqual([]);
  });

  it('a database index the server has is used (db 1), and db 0 stays empty under the prefix', async () => {
    const prefix = freshPrefix();
    const stores = createRedisStores({ url: withDatabase(1), prefix });
    try {
      await stores.setup();
      await stores.facts.create({ userId: 'alice' }, { content: 'kept in database one' });
      expect(await keysUnder(prefix)).toEqual([]);
      expect(await stores.connection.scan(`${prefix}*`)).not.toEqual([]);
    } finally {
      await stores.connection.deleteAll();
      await stores.close();
    }
  });
});
