import type { KiokuStores, Tokenizer } from '@kioku/core';
import { once, type SessionStoreOptions, type WorkingMemoryOptions } from '@kioku/core/adapter';
import type { SqliteStoreOptions } from './base.js';
import { type SetupReport, SqliteConnection } from './connection.js';
import { SqliteDetailStore } from './details.js';
import { SqliteDocumentStore } from './documents.js';
import { SqliteFactStore } from './facts.js';
import { SqlitePlanStore } from './plans.js';
import { SqliteSessionStore } from './sessions.js';
import { SqliteWorkingMemoryStore } from './working.js';

export interface SqliteStoresOptions extends Omit<SqliteStoreOptions, 'connection'> {
  tokenizer?: Tokenizer;
  /** Chunk size for documents, in tokens (default 300). */
  chunkTokens?: number;
  working?: WorkingMemoryOptions;
  sessions?: SessionStoreOptions;
}

/**
 * All six stores over one connection (one file, or one `:memory:` database they share). Call
 * `await stores.setup()` once before use and `stores.close()` at the end.
 */
export function createSqliteStores(options: SqliteStoresOptions) {
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
