import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { HashingEmbedder } from '@kioku/core';
import { type FactStore, withFactEmbeddings } from '@kioku/core/store';
import { createJsonStores } from '@kioku/store-json';
import { createPostgresStores } from '@kioku/store-postgres';
import { createRedisStores } from '@kioku/store-redis';
import { createSqliteStores } from '@kioku/store-sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { PG_URL, REDIS_URL, readmeExamples, searchClaims } from '../src/index.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

/** The fact store the README is about, empty, on a real backend (a temp file, schema or key prefix). */
async function storeFor(readme: string): Promise<FactStore> {
  const temp = await mkdtemp(path.join(tmpdir(), 'kioku-readme-'));
  cleanups.push(() => rm(temp, { recursive: true, force: true }));
  const name = `readme_${randomBytes(4).toString('hex')}`;
  if (readme.includes('store-sqlite')) {
    const stores = createSqliteStores({ file: path.join(temp, 'kioku.db') });
    await stores.setup();
    cleanups.push(async () => stores.close());
    return stores.facts;
  }
  if (readme.includes('store-postgres')) {
    const stores = createPostgresStores({ url: PG_URL, schema: name });
    await stores.setup();
    cleanups.push(async () => {
      await stores.database.client.unsafe(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
      await stores.close();
    });
    return stores.facts;
  }
  if (readme.includes('store-redis')) {
    const stores = createRedisStores({ url: REDIS_URL, prefix: `${name}:` });
    await stores.setup();
    cleanups.push(async () => {
      await stores.connection.deleteAll();
      await stores.close();
    });
    return stores.facts;
  }
  return createJsonStores({ directory: temp }).facts;
}

const claims = [
  'README.md',
  'packages/core/README.md',
  ...['json', 'sqlite', 'postgres', 'redis'].map((b) => `packages/store-${b}/README.md`),
]
  .flatMap((readme) => readmeExamples(root, readme, root))
  .flatMap((example) =>
    searchClaims(example.code).map((claim) => ({ ...claim, at: `${example.readme}:${example.line}` })),
  );

describe('README examples that search find what they stored', () => {
  it('there are such examples (root, core, SQLite, PostgreSQL, Redis)', () => {
    expect(claims.map((c) => c.at.split(':')[0])).toEqual(
      expect.arrayContaining([
        'README.md',
        'packages/core/README.md',
        'packages/store-sqlite/README.md',
        'packages/store-postgres/README.md',
        'packages/store-redis/README.md',
      ]),
    );
  });

  it.for(claims)('$at: "$query"', async ({ at, contents, query, hybrid }, { skip }) => {
    let facts: FactStore;
    try {
      facts = await storeFor(at);
      // An example with an embedder searches lexically and by vector: so does its claim.
      if (hybrid) facts = withFactEmbeddings(facts, { embedder: new HashingEmbedder({ dimensions: 256 }) });
    } catch (error) {
      // PostgreSQL and Redis examples need the servers: skipped outside CI, a failure under CI.
      if (process.env.CI) throw error;
      return skip(`no server for ${at}: ${(error as Error).message}`);
    }
    const alice = { userId: 'alice' };
    for (const content of contents) await facts.create(alice, { content });
    const hits = await facts.search(alice, { query });
    expect(
      hits.map((hit) => hit.fact.content),
      `${at} searches "${query}"`,
    ).toContain(contents[0]);
  });

  it('a claim whose query shares no word with what was stored would fail (the old dark-mode example)', async () => {
    const facts = await storeFor('packages/store-sqlite/README.md');
    await facts.create({ userId: 'alice' }, { content: 'Prefers dark mode' });
    expect(await facts.search({ userId: 'alice' }, { query: 'which theme does she like?' })).toEqual([]);
  });
});
