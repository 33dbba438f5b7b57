import type { Clock, KiokuStores, Tokenizer } from '@kioku/core';
import {
  once,
  type SessionStoreOptions,
  storesOverBackend,
  type WorkingMemoryOptions,
} from '@kioku/core/adapter';
import type Database from 'better-sqlite3';
import type { SqliteStoreOptions } from './base.js';
import { type SetupReport, SqliteConnection } from './connection.js';
import { SqliteDetailStore } from './details.js';
import { SqliteDocumentStore } from './documents.js';
import { SqliteFactStore } from './facts.js';
import { SqlitePlanStore } from './plans.js';
import { SqliteRecordBackend } from './record-backend.js';
import type { SearchSettings } from './search.js';
import { SqliteSessionStore } from './sessions.js';
import { SqliteWorkingMemoryStore } from './working.js';

export interface SqliteStoresOptions {
  /** The database file (`setup()` creates it when missing), or `':memory:'`; give `file` or `database`. */
  file?: string;
  /** Instead of `file`: an open better-sqlite3 database. Its pragmas are left alone and `close()` keeps it open. */
  database?: Database.Database;
  /** How long a write waits for another connection's lock (default 5 s; connections Kioku opens). */
  busyTimeoutMs?: number;
  /** Time source for timestamps and TTLs (default: the system clock). */
  clock?: Clock;
  /** Search ranking and candidate depth (see `Ranking`). */
  search?: Partial<SearchSettings>;
  tokenizer?: Tokenizer;
  /** Chunk size for documents, in tokens (default 300). */
  chunkTokens?: number;
  working?: Omit<WorkingMemoryOptions, 'clock'>;
  sessions?: Omit<SessionStoreOptions, 'clock'>;
}

/** What `createSqliteStores` returns: the six stores, their backend, `setup()` with its report, `close()`. */
export type SqliteStores = Omit<KiokuStores, 'setup'> & {
  backend: SqliteRecordBackend;
  setup(): Promise<SetupReport>;
};

/**
 * All six stores in one SQLite file (or one `:memory:` database): the records layout, core's stores over
 * `SqliteRecordBackend` (one row per record in `kioku_records`; facts, document chunks and details searched
 * with FTS5). Call `await stores.setup()` once before use (it also moves a database of the native layout
 * into this one) and `await stores.close()` at the end.
 */
export function createSqliteStores(options: SqliteStoresOptions): SqliteStores {
  const { file, database, busyTimeoutMs, search, ...stores } = options;
  const backend = new SqliteRecordBackend({
    ...(file === undefined ? {} : { file }),
    ...(database === undefined ? {} : { database }),
    ...(busyTimeoutMs === undefined ? {} : { busyTimeoutMs }),
    ...(search === undefined ? {} : { search }),
    ...(stores.clock === undefined ? {} : { clock: stores.clock }),
  });
  return { backend, ...storesOverBackend(backend, stores), setup: () => backend.setup() };
}

export interface SqliteNativeStoresOptions extends Omit<SqliteStoreOptions, 'connection'> {
  tokenizer?: Tokenizer;
  /** Chunk size for documents, in tokens (default 300). */
  chunkTokens?: number;
  working?: WorkingMemoryOptions;
  sessions?: SessionStoreOptions;
}

/**
 * The native layout (the default before the records layout): a table per kind, each kind's store written
 * for SQLite. Kept for databases an earlier version wrote that must stay in that layout (an older process
 * still uses the file) and to compare the two layouts (`pnpm bench:store-sqlite-ab`); `createSqliteStores`
 * moves such a database into the records layout on `setup()`.
 */
export function createSqliteNativeStores(options: SqliteNativeStoresOptions) {
  const { file, database, busyTimeoutMs, tokenizer, chunkTokens, working, sessions, ...common } = options;
  const connection = new SqliteConnection({ file, database, busyTimeoutMs });
  const shared = { ...common, connection };
  return {
    connection,
    facts: new SqliteFactStore(shared),
    documents: new SqliteDocumentStore({ ...shared, tokenizer, chunkTokens }),
    plans: new SqlitePlanStore(shared),
    working: new SqliteWorkingMemoryStore({ ...working, ...shared }),
    sessions: new SqliteSessionStore({ ...sessions, ...shared }),
    details: new SqliteDetailStore({ ...shared, tokenizer }),
    setup: (): Promise<SetupReport> => connection.setup(),
    close: once(() => connection.close()),
  } satisfies KiokuStores & { connection: unknown };
}
