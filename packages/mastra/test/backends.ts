import { randomBytes } from 'node:crypto';
import { type Clock, createInMemoryStores, type KiokuStores } from '@kioku/core';
import { createPostgresStores } from '@kioku/store-postgres';
import postgres from 'postgres';

export const PG_URL =
  process.env.KIOKU_PG_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface Backend {
  stores: KiokuStores;
  destroy(): Promise<void>;
}

/** A clock that moves one second on every read: items written one after another never share a time. */
export function steppingClock(): Clock {
  let now = Date.UTC(2026, 0, 1);
  return { now: () => (now += 1000) };
}

/** Kioku's stores on each backend, fresh and set up: a schema, a key prefix or a file of their own. */
export const BACKENDS: Record<string, (clock?: Clock) => Promise<Backend>> = {
  memory: async (clock) => ({
    stores: createInMemoryStores(clock ? { clock } : {}),
    destroy: async () => {},
  }),
  postgres: async (clock) => {
    const schema = `langgraph_${randomBytes(5).toString('hex')}`;
    const stores = createPostgresStores({
      url: PG_URL,
      schema,
      clientOptions: { max: 2, onnotice: () => {} },
      ...(clock ? { clock } : {}),
    });
    await stores.setup();
    return {
      stores,
      async destroy() {
        await stores.close();
        const sql = postgres(PG_URL, { max: 1, onnotice: () => {} });
        await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await sql.end();
      },
    };
  },
};
