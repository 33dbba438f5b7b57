import type { Clock, KiokuStores, Tokenizer } from '@kioku/core';
import { type SessionStoreOptions, storesOverBackend, type WorkingMemoryOptions } from '@kioku/core/adapter';
import type Database from 'better-sqlite3';
import { type SetupReport, SqliteRecordBackend } from './record-backend.js';
import type { SearchSettings } from './search.js';

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
 * All six stores in one SQLite file (or one `:memory:` database): core's stores over `SqliteRecordBackend`
 * (one row per record in `kioku_records`; facts, document chunks and details searched with FTS5). Call
 * `await stores.setup()` once before use and `await stores.close()` at the end.
 */
export function createSqliteStores(options: SqliteStoresOptions): SqliteStores {
  const { file, database, busyTimeoutMs, search, ...stores } = options;
  const backend = new SqliteRecordBackend({
    ...(file === undefined ? {} : { file }),
    ...(database === undefined ? {} : { database }),
    ...(busyTimeoutMs === undefined ? {} : { busyTimeoutMs }),
    ...(search === undefined ? {} : { search }),
  });
  return { backend, ...storesOverBackend(backend, stores), setup: () => backend.setup() };
}
