import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { KiokuStores } from '@kioku/core';
import { createJsonStores } from '@kioku/store-json';
import { createPostgresStores } from '@kioku/store-postgres';
import { createRedisStores } from '@kioku/store-redis';
import { createSqliteStores } from '@kioku/store-sqlite';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { type DirectorySource, openDirectory } from '../src/index.js';

const PG_URL =
  process.env.KIOKU_PG_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.KIOKU_REDIS_URL ?? 'redis://127.0.0.1:6379';

interface Backend {
  stores: KiokuStores;
  source: DirectorySource;
  /** Counts the directory reads natively (SQL); the others leave counts to the page. */
  counts: boolean;
  destroy(): Promise<void>;
}

const BACKENDS: Record<string, () => Promise<Backend>> = {
  json: async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'kioku-studio-dir-'));
    return {
      stores: createJsonStores({ directory: dir }),
      source: { type: 'json', directory: dir },
      counts: false,
      destroy: () => rm(dir, { recursive: true, force: true }),
    };
  },
  sqlite: async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'kioku-studio-dir-'));
    const file = path.join(dir, 'kioku.db');
    return {
      stores: createSqliteStores({ file }),
      source: { type: 'sqlite', file },
      counts: true,
      destroy: () => rm(dir, { recursive: true, force: true }),
    };
  },
  postgres: async () => {
    const schema = `studio_dir_${randomBytes(5).toString('hex')}`;
    return {
      stores: createPostgresStores({ url: PG_URL, schema, clientOptions: { max: 2, onnotice: () => {} } }),
      source: { type: 'postgres', url: PG_URL, schema },
      counts: true,
      async destroy() {
        const sql = postgres(PG_URL, { max: 1, onnotice: () => {} });
        await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await sql.end();
      },
    };
  },
  redis: async () => {
    const prefix = `kioku-studio-${randomBytes(4).toString('hex')}:`;
    return {
      stores: createRedisStores({ url: REDIS_URL, prefix }),
      source: { type: 'redis', url: REDIS_URL, prefix },
      counts: false,
      async destroy() {
        const redis = new Redis(REDIS_URL);
        const keys = await redis.keys(`${prefix}*`);
        if (keys.length > 0) await redis.del(...keys);
        redis.disconnect();
      },
    };
  },
};

/** Which users (and agents) each backend holds, as the users page lists them: sorted, paged, filtered. */
describe.each(Object.keys(BACKENDS))('user directory: %s', (name) => {
  it('lists every user and agent once, in order, a page at a time, with counts where native', async () => {
    const backend = await BACKENDS[name]!();
    await backend.stores.setup();
    try {
      const { stores } = backend;
      await stores.facts.create({ userId: 'Zoe' }, { content: 'a' });
      await stores.facts.create({ userId: 'alice' }, { content: 'b' });
      await stores.facts.create({ userId: 'alice' }, { content: 'c' });
      await stores.facts.create({ userId: 'alice', agentId: 'coder' }, { content: 'd' });
      await stores.sessions.create({ userId: 'bob.smith+x@example' });
      await stores.working.set({ userId: 'alice' }, 'session/x/note', 'v', { ttlMs: 60_000 });
      const directory = await openDirectory(backend.source);
      try {
        const all = await directory.list({ limit: 10, offset: 0 });
        expect(all.total).toBe(4);
        expect(all.partitions.map((p) => [p.userId, p.agentId])).toEqual([
          ['Zoe', undefined],
          ['alice', undefined],
          ['alice', 'coder'],
          ['bob.smith+x@example', undefined],
        ]);
        if (backend.counts) {
          expect(all.partitions[1]!.counts).toMatchObject({ facts: 2, working: 1, sessions: 0, plans: 0 });
          expect(all.partitions[3]!.counts).toMatchObject({ facts: 0, sessions: 1 });
        }
        const second = await directory.list({ limit: 2, offset: 2 });
        expect(second.partitions.map((p) => p.userId)).toEqual(['alice', 'bob.smith+x@example']);
        const alices = await directory.list({ limit: 10, offset: 0, userPrefix: 'ali' });
        expect(alices.total).toBe(2);
      } finally {
        await directory.close();
      }
    } finally {
      await backend.stores.close();
      await backend.destroy();
    }
  });
});
