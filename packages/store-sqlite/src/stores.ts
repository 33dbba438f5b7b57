import type { Clock, KiokuStores, Tokenizer } from '@kioku/core';
import { type SessionStoreOptions, storesOverBackend, type WorkingMemoryOptions } from '@kioku/core/adapter';
import type Database from 'better-sqlite3';
import { SqliteConnection } from './connection.js';
import { notSetUp, type SetupReport, SqliteRecordBackend } from './record-backend.js';
import type { SearchSettings } from './search-settings.js';
import { SqliteVectorIndex, type SqliteVectorIndexOptions } from './vectors.js';

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
  /**
   * A vector index in the same database (sqlite-vec; `dimensions`: the embedder's), for hybrid recall
   * whose vectors survive a restart: `withEmbeddings(stores, { embedder })` (or the builder's
   * `embeddings`) uses it. `setup()` then also loads sqlite-vec and creates its tables.
   */
  vectors?: Pick<SqliteVectorIndexOptions, 'dimensions' | 'table'>;
}

/** What `createSqliteStores` returns: the six stores, their backend, `setup()` with its report, `close()`. */
export type SqliteStores = Omit<KiokuStores, 'setup' | 'vectors'> & {
  backend: SqliteRecordBackend;
  /** Only with the `vectors` option. */
  vectors?: SqliteVectorIndex;
  setup(): Promise<SetupReport>;
};

/**
 * All six stores in one SQLite file (or one `:memory:` database), and a vector index beside them if asked:
 * core's stores over `SqliteRecordBackend` (one row per record in `kioku_records`; facts, document chunks
 * and details searched with FTS5), one connection for all. Call `await stores.setup()` once before use and
 * `await stores.close()` at the end.
 */
export function createSqliteStores(options: SqliteStoresOptions): SqliteStores {
  const { file, database, busyTimeoutMs, search, vectors: vectorOptions, ...stores } = options;
  const connection = new SqliteConnection(
    {
      ...(file === undefined ? {} : { file }),
      ...(database === undefined ? {} : { database }),
      ...(busyTimeoutMs === undefined ? {} : { busyTimeoutMs }),
    },
    notSetUp,
  );
  const backend = new SqliteRecordBackend({ connection, ...(search === undefined ? {} : { search }) });
  const vectors =
    vectorOptions && new SqliteVectorIndex({ ...vectorOptions, connection, clock: stores.clock });
  const { vectors: _none, ...kinds } = storesOverBackend(backend, stores);
  return {
    backend,
    ...kinds,
    ...(vectors ? { vectors } : {}),
    async setup() {
      const report = await backend.setup();
      await vectors?.setup();
      return report;
    },
  };
}
