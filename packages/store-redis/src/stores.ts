import type { KiokuStores, Tokenizer } from '@kioku/core';
import {
  type LexicalIndexOptions,
  once,
  type SessionStoreOptions,
  type WorkingMemoryOptions,
} from '@kioku/core/adapter';
import type { RedisStoreOptions } from './base.js';
import { RedisConnection, type SetupReport } from './connection.js';
import { RedisDetailStore } from './details.js';
import { RedisDocumentStore } from './documents.js';
import { RedisFactStore } from './facts.js';
import { RedisPlanStore } from './plans.js';
import type { PartitionCacheOptions } from './records.js';
import { RedisSessionStore } from './sessions.js';
import { RedisWorkingMemoryStore } from './working.js';

export interface RedisStoresOptions extends Omit<RedisStoreOptions, 'connection'> {
  tokenizer?: Tokenizer;
  /** Chunk size for documents, in tokens (default 300). */
  chunkTokens?: number;
  /** Search partitions kept in memory per store (facts, documents, details). */
  cache?: PartitionCacheOptions;
  /** Ranking parameters for core's LexicalIndex (default: core's). */
  search?: LexicalIndexOptions;
  working?: WorkingMemoryOptions;
  sessions?: SessionStoreOptions;
}

/**
 * All six stores over one Redis client (opened from `url`, or yours as `client`), under one prefix.
 * `close()` quits the client only when Kioku opened it.
 */
export function createRedisStores(options: RedisStoresOptions) {
  const {
    url,
    client,
    redisOptions,
    prefix,
    tokenizer,
    chunkTokens,
    cache,
    search,
    working,
    sessions,
    clock,
  } = options;
  const connection = new RedisConnection({ url, client, redisOptions, prefix });
  const shared = { connection, clock };
  return {
    connection,
    facts: new RedisFactStore({ ...shared, cache, search }),
    documents: new RedisDocumentStore({ ...shared, cache, search, tokenizer, chunkTokens }),
    plans: new RedisPlanStore(shared),
    working: new RedisWorkingMemoryStore({ ...working, ...shared, search }),
    sessions: new RedisSessionStore({ ...sessions, ...shared }),
    details: new RedisDetailStore({ ...shared, cache, search, tokenizer }),
    /** Optional: checks the server is reachable and is Redis 7 or later. */
    setup: (): Promise<SetupReport> => connection.setup(),
    close: once(() => connection.close()),
  } satisfies KiokuStores & { connection: unknown };
}
