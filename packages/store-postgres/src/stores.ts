import type { Clock, KiokuStores, SessionStoreOptions, Tokenizer, WorkingMemoryOptions } from '@kioku/core';
import { once } from '@kioku/core/adapter';
import { type PostgresConnectionOptions, PostgresDatabase } from './database.js';
import { PostgresDetailStore } from './details.js';
import { PostgresDocumentStore } from './documents.js';
import { PostgresFactStore } from './facts.js';
import { PostgresPlanStore } from './plans.js';
import { PostgresSessionStore } from './sessions.js';
import { PostgresWorkingMemoryStore } from './working.js';

export interface PostgresStoresOptions extends PostgresConnectionOptions {
  clock?: Clock;
  tokenizer?: Tokenizer;
  /** Maximum tokens per document chunk (default 300). */
  chunkTokens?: number;
  working?: Omit<WorkingMemoryOptions, 'clock'>;
  sessions?: Omit<SessionStoreOptions, 'clock'>;
}

export interface PostgresStores extends KiokuStores {
  facts: PostgresFactStore;
  documents: PostgresDocumentStore;
  plans: PostgresPlanStore;
  working: PostgresWorkingMemoryStore;
  sessions: PostgresSessionStore;
  details: PostgresDetailStore;
  database: PostgresDatabase;
  /** Create the schema and apply pending migrations (idempotent). */
  setup(): Promise<void>;
  /** End the connection if it was opened from `url`. */
  close(): Promise<void>;
}

/** All six stores over one connection and schema. Call `setup()` once before first use. */
export function createPostgresStores(options: PostgresStoresOptions): PostgresStores {
  const database = new PostgresDatabase(options);
  const common = { database, clock: options.clock };
  return {
    facts: new PostgresFactStore(common),
    documents: new PostgresDocumentStore({
      ...common,
      tokenizer: options.tokenizer,
      chunkTokens: options.chunkTokens,
    }),
    plans: new PostgresPlanStore(common),
    working: new PostgresWorkingMemoryStore({ ...common, ...options.working }),
    sessions: new PostgresSessionStore({ ...common, ...options.sessions }),
    details: new PostgresDetailStore({ ...common, tokenizer: options.tokenizer }),
    database,
    setup: () => database.setup(),
    close: once(() => database.close()),
  };
}
