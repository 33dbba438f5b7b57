import type { Clock, KiokuStores, Tokenizer } from '@kioku/core';
import { once, type SessionStoreOptions, type WorkingMemoryOptions } from '@kioku/core/adapter';
import { type PostgresConnectionOptions, PostgresDatabase } from './database.js';
import { PostgresDetailStore } from './details.js';
import { PostgresDocumentStore } from './documents.js';
import { PostgresFactStore } from './facts.js';
import { PostgresPlanStore } from './plans.js';
import { PostgresSessionStore } from './sessions.js';
import { PostgresVectorIndex, type PostgresVectorIndexOptions } from './vectors.js';
import { PostgresWorkingMemoryStore } from './working.js';

export interface PostgresStoresOptions extends PostgresConnectionOptions {
  clock?: Clock;
  tokenizer?: Tokenizer;
  /** Maximum tokens per document chunk (default 300). */
  chunkTokens?: number;
  /** Facts kept as in-memory search indexes of small partitions, and a quarter as many records (default 200,000; 0: off). */
  searchCacheFacts?: number;
  working?: Omit<WorkingMemoryOptions, 'clock'>;
  sessions?: Omit<SessionStoreOptions, 'clock'>;
  /**
   * A vector index on pgvector beside the stores (`dimensions`: the embedder's); `setup()` then also
   * creates the extension and its table, and fails with UNSUPPORTED where pgvector is not installed.
   */
  vectors?: Pick<PostgresVectorIndexOptions, 'dimensions' | 'table' | 'efSearch' | 'batchSize'>;
}

export interface PostgresStores extends KiokuStores {
  facts: PostgresFactStore;
  documents: PostgresDocumentStore;
  plans: PostgresPlanStore;
  working: PostgresWorkingMemoryStore;
  sessions: PostgresSessionStore;
  details: PostgresDetailStore;
  /** Only with the `vectors` option. */
  vectors?: PostgresVectorIndex;
  database: PostgresDatabase;
  /** Create the schema and apply pending migrations, and the vector table with `vectors` (idempotent). */
  setup(): Promise<void>;
  /** End the connection if it was opened from `url`. */
  close(): Promise<void>;
}

/** All six stores (and a vector index, if asked) over one connection and schema. Call `setup()` once before first use. */
export function createPostgresStores(options: PostgresStoresOptions): PostgresStores {
  const database = new PostgresDatabase(options);
  const common = { database, clock: options.clock };
  const vectors = options.vectors && new PostgresVectorIndex({ ...options.vectors, ...common });
  return {
    facts: new PostgresFactStore({ ...common, searchCacheFacts: options.searchCacheFacts }),
    documents: new PostgresDocumentStore({
      ...common,
      tokenizer: options.tokenizer,
      chunkTokens: options.chunkTokens,
    }),
    plans: new PostgresPlanStore(common),
    working: new PostgresWorkingMemoryStore({ ...common, ...options.working }),
    sessions: new PostgresSessionStore({ ...common, ...options.sessions }),
    details: new PostgresDetailStore({ ...common, tokenizer: options.tokenizer }),
    ...(vectors ? { vectors } : {}),
    database,
    async setup() {
      await database.setup();
      await vectors?.setup();
    },
    close: once(() => database.close()),
  };
}
