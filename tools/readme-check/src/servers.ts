import { randomBytes } from 'node:crypto';
import { startPgvectorTestServer } from '@kioku/pgvector-test-server';
import { startQdrantTestServer } from '@kioku/qdrant-test-server';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import type { ReadmeExample } from './examples.js';
import { startScriptedModel } from './model.js';
import { SERVERS } from './needs.js';

/** The local servers examples run against (CI sets the same defaults as these machines). */
export const PG_URL =
  process.env.KIOKU_PG_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.KIOKU_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A server an example needs is not reachable (PostgreSQL or Redis not running). */
export class ServerUnavailableError extends Error {}

/** The servers of one example's run: the variables to give it, what they saw, and how to let them go. */
export interface Servers {
  env: Record<string, string>;
  /** Complaints found after the run, e.g. requests the Qdrant stand-in refused as off the documented API. */
  complaints(): string[];
  stop(): Promise<void>;
}

/**
 * Starts (the scripted model, the Qdrant and pgvector stand-ins) or prepares (a fresh PostgreSQL
 * database) what an example's `// Needs:` line names. Redis is the shared local server; the keys under
 * each `prefix: '…'` the example names are deleted after it.
 */
export async function provideServers(example: ReadmeExample): Promise<Servers> {
  const env: Record<string, string> = {};
  const stops: Array<() => Promise<unknown>> = [];
  const complaints: Array<() => string[]> = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(() => {});
  };
  try {
    for (const need of new Set(example.needs)) {
      if (need === 'model') {
        const model = await startScriptedModel(example.replies);
        stops.push(model.close);
        Object.assign(env, {
          OPENAI_BASE_URL: model.baseURL,
          OPENAI_API_KEY: 'readme-check',
          // The Agents SDK would otherwise send traces to OpenAI's own endpoint.
          OPENAI_AGENTS_DISABLE_TRACING: '1',
        });
      } else if (need === 'postgres') {
        env.DATABASE_URL = await freshDatabase(stops);
      } else if (need === 'pgvector') {
        const server = await startPgvectorTestServer();
        stops.push(() => server.stop());
        // One connection per client (postgres.js reads `max` from the URL): the stand-in runs one PostgreSQL
        // session for all connections, and a pool's concurrent queries can lose each other's portals.
        env.DATABASE_URL = `${server.url}?max=1`;
      } else if (need === 'qdrant') {
        const server = await startQdrantTestServer();
        stops.push(() => server.stop());
        complaints.push(() => (server.violations.length > 0 ? [server.report()] : []));
        env.QDRANT_URL = server.url;
      } else {
        env.REDIS_URL = await redisFor(example.code, stops);
      }
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { env, complaints: () => complaints.flatMap((c) => c()), stop };
}

/** The variables of every server, which an example gets only when it says it needs that server. */
export const SERVER_VARIABLES = [...new Set(Object.values(SERVERS).flatMap((s) => s.env))];

/** A new, empty database on the local PostgreSQL, dropped after the example. */
async function freshDatabase(stops: Array<() => Promise<unknown>>): Promise<string> {
  const name = `readme_${randomBytes(6).toString('hex')}`;
  const admin = postgres(PG_URL, { max: 1, onnotice: () => {} });
  try {
    // template0: never connected to, so a concurrent CREATE DATABASE elsewhere cannot block this one.
    await admin.unsafe(`CREATE DATABASE "${name}" TEMPLATE template0`);
  } catch (error) {
    await admin.end();
    throw new ServerUnavailableError(`PostgreSQL at ${PG_URL}: ${(error as Error).message}`);
  }
  stops.push(async () => {
    await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  });
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

const PREFIX = /prefix:\s*'([^']+)'/g;

async function redisFor(code: string, stops: Array<() => Promise<unknown>>): Promise<string> {
  const redis = new Redis(REDIS_URL, {
    maxRetriesPerRequest: 0,
    lazyConnect: true,
    retryStrategy: () => null,
  });
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw new ServerUnavailableError(`Redis at ${REDIS_URL}: ${(error as Error).message}`);
  }
  const prefixes = [...code.matchAll(PREFIX)].map((m) => m[1]!);
  stops.push(async () => {
    for (const prefix of prefixes) {
      for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 500 })) {
        if ((keys as string[]).length > 0) await redis.del(...(keys as string[]));
      }
    }
    redis.disconnect();
  });
  return REDIS_URL;
}
