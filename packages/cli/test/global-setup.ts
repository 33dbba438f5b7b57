import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import type { TestProject } from 'vitest/node';
import { describeCliEntry } from './cli-entry.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of this run's own PostgreSQL database ('' when no server is reachable and those tests skip). */
    pgUrl: string;
    /** Redis URL ('' when unreachable) and the key prefix this run writes under. */
    redisUrl: string;
    redisPrefix: string;
  }
}

const ciIsSet = () => !!process.env.CI && !['0', 'false'].includes(process.env.CI.toLowerCase());

function redact(url: string): string {
  return url.replace(/\/\/([^:/@]*):[^@]*@/, '//$1:***@');
}

/** Without a server: fail when CI is set (an integration test must never pass by skipping there), else warn. */
function unreachable(what: string, url: string, error: unknown, envVar: string): void {
  const why = `${what} is not reachable at ${redact(url)} (${(error as Error).message})`;
  if (ciIsSet()) throw new Error(`${why}. CI is set, so @kioku/cli tests fail instead of skipping.`);
  console.warn(`\n[cli] ${why}: skipping the ${what} tests. Set ${envVar}.\n`);
}

/**
 * A fresh database `kioku_cli_test_<random>` for the run, dropped afterwards (the approach of
 * @kioku/store-postgres's tests), and a random Redis key prefix whose keys are deleted afterwards.
 */
export default async function setup(project: TestProject) {
  const teardown: (() => Promise<void>)[] = [];
  console.log(`[cli] tests start kioku from ${describeCliEntry()}`);

  const pgServer =
    process.env.KIOKU_PG_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const admin = postgres(pgServer, { max: 1, connect_timeout: 5, onnotice: () => {} });
  try {
    await admin`select 1`;
    const name = `kioku_cli_test_${randomBytes(6).toString('hex')}`;
    await admin.unsafe(`create database "${name}"`);
    const url = new URL(pgServer);
    url.pathname = `/${name}`;
    project.provide('pgUrl', url.toString());
    teardown.push(async () => {
      await admin.unsafe(`drop database if exists "${name}" with (force)`);
      await admin.end({ timeout: 5 });
    });
  } catch (error) {
    await admin.end({ timeout: 1 }).catch(() => {});
    unreachable('PostgreSQL', pgServer, error, 'KIOKU_PG_URL or DATABASE_URL');
    project.provide('pgUrl', '');
  }

  const redisServer = process.env.KIOKU_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const redis = new Redis(redisServer, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.ping();
    const prefix = `kioku-cli-test:${randomBytes(6).toString('hex')}:`;
    project.provide('redisUrl', redisServer);
    project.provide('redisPrefix', prefix);
    teardown.push(async () => {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        if (keys.length > 0) await redis.unlink(...keys);
        cursor = next;
      } while (cursor !== '0');
      await redis.quit();
    });
  } catch (error) {
    redis.disconnect();
    unreachable('Redis', redisServer, error, 'KIOKU_REDIS_URL');
    project.provide('redisUrl', '');
    project.provide('redisPrefix', '');
  }

  return async () => {
    for (const step of teardown) await step();
  };
}
