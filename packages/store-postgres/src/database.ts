import { StorageError, ValidationError } from '@kioku/core';
import { checkUrlScheme } from '@kioku/core/adapter';
import { sql } from 'drizzle-orm';
import type { MigrationMeta } from 'drizzle-orm/migrator';
import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import postgres, { type Sql } from 'postgres';
import { toKiokuError } from './errors.js';
import { applyMigrations, bundledMigrations, migrationsIn } from './migrations.js';
import { MIGRATIONS_TABLE } from './migrations-table.js';
import { reportingQueryText } from './query-text.js';
import { analyseFacts } from './reindex.js';
import { type KiokuTables, kiokuTables } from './schema.js';

/** Where the stores keep their tables, unless told otherwise. */
export const DEFAULT_SCHEMA = 'kioku';

const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/;

/** A store call's deadline unless told otherwise: far above any turn's statements, well below a hung TCP. */
export const DEFAULT_DEADLINE_MS = 10_000;

/**
 * Connections a client opened from `url` keeps at most, unless `clientOptions.max` says otherwise. Kioku's
 * statements are short and postgres.js pipelines them on a busy connection, so a small pool serves many
 * concurrent turns; each further connection is another socket to write to and another server process to
 * wake for a turn's parallel reads. `pnpm bench:load` on a 2-core server, 4 processes × 25 users: 305
 * turns/s with 10 per process (postgres.js's default), 432 with 4, 832 with 2.
 */
export const DEFAULT_POOL_SIZE = 2;

/** postgres.js's timeouts (in seconds) for a deadline in ms. */
function deadlineOptions(deadlineMs: number) {
  if (!(deadlineMs > 0) || !Number.isFinite(deadlineMs)) {
    throw new ValidationError(`deadlineMs must be a positive number of milliseconds (got ${deadlineMs}).`);
  }
  const seconds = deadlineMs / 1000;
  return { query_timeout: seconds, queue_timeout: seconds, connect_timeout: seconds };
}

export interface PostgresConnectionOptions {
  /** A `postgres://` URL. The store opens its own client and ends it on `close()`. */
  url?: string;
  /** An existing postgres.js client (`postgres(...)`). The store uses it as is and never ends it. */
  client?: Sql;
  /**
   * postgres.js options for the client opened from `url`: pool size `max` (default 2, see
   * `DEFAULT_POOL_SIZE`), ssl, `prepare`, timeouts.
   */
  clientOptions?: postgres.Options<Record<string, postgres.PostgresType>>;
  /**
   * How long a call may wait for a connection and run, in ms, before it fails with a retryable
   * StorageError (default 10 s): the client opened from `url` gets it as postgres.js's `query_timeout`,
   * `queue_timeout` and `connect_timeout`, unless `clientOptions` sets them. A client passed in keeps its own.
   */
  deadlineMs?: number;
  /** The schema that holds Kioku's tables; created by `setup()`. Default `kioku`. */
  schema?: string;
}

/** @internal drizzle's database (drizzle's types stay out of the published declarations). */
export type Db = PostgresJsDatabase<Record<string, never>>;
/** @internal */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

/**
 * One connection to Kioku's tables in one schema, shared by any number of stores: the postgres.js client,
 * drizzle over it, the schema-qualified tables, `setup()` and `close()`.
 */
export class PostgresDatabase {
  readonly schema: string;
  readonly client: Sql;
  /** @internal */
  readonly db: Db;
  /** @internal */
  readonly tables: KiokuTables;
  readonly #ownsClient: boolean;
  #ready: Promise<void> | undefined;

  constructor(options: PostgresConnectionOptions) {
    const schema = options.schema ?? DEFAULT_SCHEMA;
    if (!SCHEMA_NAME.test(schema)) {
      throw new ValidationError(
        `Invalid schema name "${schema}": use letters, digits and _ (at most 63), not starting with a digit.`,
      );
    }
    if ((options.url === undefined) === (options.client === undefined)) {
      throw new ValidationError(
        'Give exactly one of `url` (a postgres:// URL) or `client` (a postgres.js client).',
      );
    }
    if (options.url !== undefined) {
      checkUrlScheme('PostgreSQL stores', 'url', options.url, ['postgres', 'postgresql']);
    }
    this.schema = schema;
    this.#ownsClient = options.client === undefined;
    // Notices ("word is too long to be indexed") are expected for huge tokens; keep them out of the console.
    this.client = reportingQueryText(
      options.client ??
        postgres(options.url!, {
          onnotice: () => {},
          // Kioku reads no array of an enum or domain, and reads pgvector's type as text: nothing to fetch.
          // Fetching would wait, the first time a query meets \`vector\`, for an answer read on another
          // connection — which a single-session server (PGlite's socket) holds back while a transaction is open.
          fetch_types: false,
          max: DEFAULT_POOL_SIZE,
          ...deadlineOptions(options.deadlineMs ?? DEFAULT_DEADLINE_MS),
          ...options.clientOptions,
        }),
    );
    this.db = drizzle(this.client);
    this.tables = kiokuTables(schema);
  }

  /**
   * Create the schema and apply the bundled migrations that have not run yet (drizzle's migrator, history
   * in `<schema>.__kioku_migrations`), then analyse facts stored without search terms (see `analyseFacts`).
   * Idempotent, and safe when several processes call it at once: they
   * take turns on an advisory lock. Never runs on import; call it once at deploy or startup.
   */
  async setup(): Promise<void> {
    try {
      await this.client.begin(async (tx) => {
        // A transaction's lock, not a session's: PgBouncer in transaction mode keeps the server connection
        // for the lock's whole life, and one connection does it all (a single-session server such as
        // PGlite's socket would otherwise wait on itself).
        await tx`select pg_advisory_xact_lock(hashtextextended(${`kioku:setup:${this.schema}`}, 0))`;
        await applyMigrations(tx, this.schema, this.#migrations());
      });
      await analyseFacts(this.client, this.schema);
      this.#ready = Promise.resolve();
    } catch (error) {
      throw toKiokuError(error, this.schema);
    }
  }

  /**
   * Resolves once the schema is known to be at the bundled migration (checked once per instance); rejects
   * with a StorageError that says to call `setup()` otherwise.
   */
  ready(): Promise<void> {
    this.#ready ??= this.#checkMigrated().catch((error: unknown) => {
      this.#ready = undefined;
      throw error;
    });
    return this.#ready;
  }

  /** @internal Run `fn` once the tables are ready; every error comes out as a KiokuError. */
  async run<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    await this.ready();
    try {
      return await fn(this.db);
    } catch (error) {
      throw toKiokuError(error, this.schema);
    }
  }

  /** @internal Run `fn` in a transaction (READ COMMITTED, PostgreSQL's default). */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.run((db) => db.transaction(fn));
  }

  /**
   * @internal
   * Run `fn` in a transaction that holds advisory locks until it ends, so writers take turns across every
   * client and process. With a `partition` key: a shared lock on `gate` and an exclusive lock on the
   * partition (writers of different partitions run side by side). Without: an exclusive lock on `gate`,
   * which waits for every partition writer of that gate and holds them all off (bulk restores).
   */
  lockedTransaction<T>(gate: string, partition: string | undefined, fn: (tx: Tx) => Promise<T>): Promise<T> {
    const key = (name: string) => sql`hashtextextended(${`${this.schema}|${name}`}, 0)`;
    return this.transaction(async (tx) => {
      if (partition === undefined) await tx.execute(sql`select pg_advisory_xact_lock(${key(gate)})`);
      else {
        // OFFSET 0 keeps the subquery (the shared gate lock) from being merged: it is taken first.
        await tx.execute(
          sql`select pg_advisory_xact_lock(${key(`${gate}|${partition}`)}) from (select pg_advisory_xact_lock_shared(${key(gate)}) offset 0) as gate`,
        );
      }
      return fn(tx);
    });
  }

  /** End the client if this instance opened it; a client passed in is left to its owner. */
  async close(): Promise<void> {
    if (this.#ownsClient) await this.client.end({ timeout: 5 });
  }

  async #checkMigrated(): Promise<void> {
    const expected = Math.max(...this.#migrations().map((m) => m.folderMillis));
    let applied: number | undefined;
    try {
      const rows = await this.db.execute<{ last: string | null }>(
        sql`select max(created_at)::text as last from ${sql.identifier(this.schema)}.${sql.identifier(MIGRATIONS_TABLE)}`,
      );
      applied = rows[0]?.last == null ? undefined : Number(rows[0].last);
    } catch (error) {
      throw toKiokuError(error, this.schema);
    }
    if (applied === undefined || applied < expected) {
      throw new StorageError(
        `Kioku's tables in schema "${this.schema}" are ${applied === undefined ? 'not set up' : 'out of date'}: call setup() once (it applies the bundled migrations).`,
        { details: { schema: this.schema } },
      );
    }
  }

  /** The bundled migrations, made to run in this instance's schema. */
  #migrations(): MigrationMeta[] {
    return migrationsIn(this.schema, bundledMigrations());
  }
}
