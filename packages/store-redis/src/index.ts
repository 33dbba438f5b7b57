export type { RedisStoreOptions } from './base.js';
export {
  DEFAULT_PREFIX,
  DEFAULT_REDIS_OPTIONS,
  type RedisClient,
  type RedisClientOptions,
  RedisConnection,
  type RedisConnectionOptions,
  type RedisDefaults,
  type SetupReport,
} from './connection.js';
export { RedisDetailStore, type RedisDetailStoreOptions } from './details.js';
export { RedisDocumentStore, type RedisDocumentStoreOptions } from './documents.js';
export { RedisFactStore, type RedisFactStoreOptions, type RedisSearchOptions } from './facts.js';
export { decodePart, encodePart, KeySpace, NO_AGENT } from './keys.js';
export { RedisPlanStore } from './plans.js';
export type { PartitionCacheOptions } from './records.js';
export { RedisSessionStore, type RedisSessionStoreOptions } from './sessions.js';
export { createRedisStores, type RedisStoresOptions } from './stores.js';
export { type RedisWorkingMemoryOptions, RedisWorkingMemoryStore } from './working.js';
