import { randomBytes } from 'node:crypto';
import type { Clock } from '@kioku/core';
import type { StoreHarness } from '@kioku/store-test-suite';
import { PgDialect } from 'drizzle-orm/pg-core';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres, { type Sql } from 'postgres';
import { expect, inject } from 'vitest';
import { MIGRATIONS_TABLE, type PostgresStore, type PostgresStoreOptions } from '../src/index.js';
import { bundledMigrations, migrationsIn } from '../src/migrations.js';

/** This run's database ('' when the server is unreachable: the tests skip, see global-setup.ts). */
export const pgUrl = inject('pgUrl');
export const noServer = pgUrl === '';

let shared: Sql | undefined;

/** One client per test file, shared by the stores `create` makes (each in its own schema). */
export function sharedClient(): Sql {
  shared ??= postgres(pgUrl, { max: 8, onnotice: () => {} });
  return shared;
}

/**
 * Ends the file's shared client (a file's `afterAll`); the next file run in the same worker, which shares
 * this module (see vitest.config.ts), gets a new one.
 */
export async function endSharedClient(): Promise<void> {
  const client = shared;
  shared = undefined;
  await client?.end({ timeout: 5 });
}

/**
 * A client of its own that lists the statements it sends (`sent`, emptied at will), ended by `cleanup`:
 * tests that count a call's statements use it.
 */
export function countingClient(cleanup: Array<() => Promise<unknown>>): { client: Sql; sent: string[] } {
  const sent: string[] = [];
  const client = postgres(pgUrl, { max: 4, onnotice: () => {}, debug: (_c, query) => sent.push(query) });
  cleanup.push(() => client.end({ timeout: 5 }));
  return { client, sent };
}

/** A schema name nobody else uses. */
export function freshSchema(): string {
  return `t_${randomBytes(6).toString('hex')}`;
}

export async function dropSchema(schema: string): Promise<void> {
  await sharedClient().unsafe(`drop schema if exists "${schema}" cascade`);
}

/**
 * A fresh schema with the bundled migrations applied up to the first whose SQL mentions `marker` (not
 * included): a database an older Kioku set up, for upgrade tests. A later migration would be recorded as
 * applied and make `setup()` skip the one under test.
 */
export async function schemaBefore(marker: string): Promise<string> {
  const schema = freshSchema();
  const all = bundledMigrations();
  const at = all.findIndex((m) => m.sql.join('\n').includes(marker));
  expect(at, `no migration mentions ${marker}`).toBeGreaterThan(0);
  await new PgDialect().migrate(
    migrationsIn(schema, all.slice(0, at)),
    drizzle(sharedClient())._.session as unknown as Parameters<PgDialect['migrate']>[1],
    { migrationsFolder: '', migrationsTable: MIGRATIONS_TABLE, migrationsSchema: schema },
  );
  return schema;
}

/** Every Kioku table, children before parents. */
const TABLES = [
  'document_chunks',
  'documents',
  'facts',
  'plans',
  'working_entries',
  'session_kv',
  'session_transcript',
  'sessions',
  'details',
];

/** Schemas set up by an earlier test and emptied since: creating and migrating a schema costs ~40 ms. */
const emptySchemas: string[] = [];

async function emptySchema(schema: string): Promise<void> {
  await sharedClient().unsafe(TABLES.map((t) => `delete from "${schema}"."${t}";`).join('\n'));
  emptySchemas.push(schema);
}

/**
 * Conformance harness: every `create` is a store over an empty schema (a new one, or one an earlier test
 * used and emptied) on the file's shared client, after `setup()` (which is idempotent, so running it again
 * on a used schema is part of the test); the twin is a second store over the same schema with its own
 * client, as another process would have; `destroy` closes the store and empties the schema for reuse.
 */
export function pgHarness<S extends PostgresStore>(
  name: string,
  make: (options: PostgresStoreOptions & { clock: Clock }) => S,
): StoreHarness<S> {
  const schemas = new WeakMap<S, string>();
  const twins = new WeakSet<S>();
  return {
    name: `postgres ${name}`,
    async create(ctx) {
      const schema = emptySchemas.pop() ?? freshSchema();
      const store = make({ client: sharedClient(), schema, clock: ctx.clock });
      await store.setup();
      schemas.set(store, schema);
      return store;
    },
    createTwin(store, ctx) {
      const schema = schemas.get(store);
      if (!schema) throw new Error('not a store of this harness');
      const twin = make({
        url: pgUrl,
        clientOptions: { max: 4, onnotice: () => {} },
        schema,
        clock: ctx.clock,
      });
      twins.add(twin);
      return twin;
    },
    async destroy(store) {
      await store.close();
      const schema = schemas.get(store);
      if (schema && !twins.has(store)) {
        schemas.delete(store);
        await emptySchema(schema);
      }
    },
  };
}
