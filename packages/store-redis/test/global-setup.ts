import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Redis URL for the run ('' when no server is reachable and the run skips). */
    redisUrl: string;
    /** The key prefix this run writes under; every test store uses its own prefix below it. */
    runPrefix: string;
  }
}

/** Where the tests find Redis. Only keys under this run's own random prefix are ever written. */
export function serverUrl(): string {
  return process.env.KIOKU_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
}

function redact(url: string): string {
  return url.replace(/\/\/([^:/@]*):[^@]*@/, '//$1:***@');
}

const ciIsSet = () => !!process.env.CI && !['0', 'false'].includes(process.env.CI.toLowerCase());

/**
 * Checks the server once per run and picks the run's prefix `kioku-test:<random>:`. When Redis is not
 * reachable the run fails if `CI` is set (a skipped integration suite must never pass silently there);
 * otherwise every test skips with a message saying why. Afterwards every key under the run's prefix is
 * deleted (SCAN + UNLINK), including keys of tests that failed half-way.
 */
export default async function setup(project: TestProject) {
  const url = serverUrl();
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    client.disconnect();
    const why = `Redis is not reachable at ${redact(url)} (${(error as Error).message})`;
    if (ciIsSet())
      throw new Error(`${why}. CI is set, so @kioku/store-redis tests fail instead of skipping.`);
    console.warn(`\n[store-redis] ${why}: skipping the integration tests. Set KIOKU_REDIS_URL.\n`);
    project.provide('redisUrl', '');
    project.provide('runPrefix', '');
    return;
  }
  const runPrefix = `kioku-test:${randomBytes(6).toString('hex')}:`;
  project.provide('redisUrl', url);
  project.provide('runPrefix', runPrefix);
  return async () => {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${runPrefix}*`, 'COUNT', 1000);
      if (keys.length > 0) await client.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
    await client.quit();
  };
}
