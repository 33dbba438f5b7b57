import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of this run's own database ('' when no server is reachable and the run skips). */
    pgUrl: string;
  }
}

/** Where the tests find a PostgreSQL server (its database is only used to create and drop the test database). */
function serverUrl(): string {
  return (
    process.env.KIOKU_PG_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
  );
}

function redact(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
}

/**
 * Creates a fresh database `kioku_test_<random>` for the run and drops it afterwards. When no server is
 * reachable the run fails if `CI` is set (a skipped integration suite must never pass silently there);
 * otherwise every test skips with a message saying why.
 */
export default async function setup(project: TestProject) {
  const url = serverUrl();
  const admin = postgres(url, { max: 1, connect_timeout: 5, onnotice: () => {} });
  try {
    await admin`select 1`;
  } catch (error) {
    await admin.end({ timeout: 1 }).catch(() => {});
    const why = `PostgreSQL is not reachable at ${redact(url)} (${(error as Error).message})`;
    if (process.env.CI && !['0', 'false'].includes(process.env.CI.toLowerCase())) {
      throw new Error(`${why}. CI is set, so @kioku/store-postgres tests fail instead of skipping.`);
    }
    console.warn(
      `\n[store-postgres] ${why}: skipping the integration tests. Set KIOKU_PG_URL or DATABASE_URL.\n`,
    );
    project.provide('pgUrl', '');
    return;
  }
  const name = `kioku_test_${randomBytes(6).toString('hex')}`;
  await admin.unsafe(`create database "${name}"`);
  const testUrl = new URL(url);
  testUrl.pathname = `/${name}`;
  project.provide('pgUrl', testUrl.toString());
  return async () => {
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
    await admin.end({ timeout: 5 });
  };
}
