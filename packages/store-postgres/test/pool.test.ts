import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresStores, DEFAULT_POOL_SIZE } from '../src/index.js';
import { endSharedClient, noServer, pgUrl, sharedClient } from './helpers.js';

describe.skipIf(noServer)('the pool a store opens from a URL', () => {
  afterAll(endSharedClient);

  /**
   * The server's connections from a client opened with `clientOptions`, while 12 statements wait on a
   * lock the test holds: once `expected` are open (a slow machine only waits longer), counted until the
   * count holds for five reads in a row, so a pool that opens more is seen opening them.
   */
  async function connectionsUnderLoad(max: number | undefined, expected: number): Promise<number> {
    const name = `kioku-pool-${randomBytes(4).toString('hex')}`;
    const key = randomBytes(4).readInt32BE();
    const stores = createPostgresStores({
      url: pgUrl,
      clientOptions: { connection: { application_name: name }, ...(max !== undefined ? { max } : {}) },
    });
    const holder = await sharedClient().reserve();
    try {
      await holder`select pg_advisory_lock(${key})`;
      const waiting = Array.from({ length: 12 }, () =>
        stores.database.client`select pg_advisory_xact_lock_shared(${key})`.execute(),
      );
      const count = async () =>
        (
          await sharedClient()<{ n: number }[]>`
            select count(*)::int as n from pg_stat_activity where application_name = ${name}`
        )[0]!.n;
      let seen = await count();
      while (seen < expected) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        seen = await count();
      }
      for (let stable = 0; stable < 5; ) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        const n = await count();
        stable = n === seen ? stable + 1 : 0;
        seen = n;
      }
      await holder`select pg_advisory_unlock(${key})`;
      await Promise.all(waiting);
      return seen;
    } finally {
      holder.release();
      await stores.close();
    }
  }

  it('keeps 2 connections by default, however many calls wait (statements pipeline on them)', async () => {
    expect(DEFAULT_POOL_SIZE).toBe(2);
    expect(await connectionsUnderLoad(undefined, 2)).toBe(2);
  });

  it('opens up to clientOptions.max when the app sizes it', async () => {
    expect(await connectionsUnderLoad(5, 5)).toBe(5);
  });
});
