export { type FoundPartition, RedisStoreBase, type RedisStoreOptions } from './base.js';
export {
  DEFAULT_PREFIX,
  DEFAULT_REDIS_OPTIONS,
  type LuaScript,
  type Multi,
  RedisConnection,
  type RedisConnectionOptions,
  type SetupReport,
} from './connection.js';
export * from './details.js';
export * from './documents.js';
export * from './facts.js';
export { decodePart, encodePart, globEscape, KeySpace, NO_AGENT, type PartitionAddress } from './keys.js';
export * from './plans.js';
export type { PartitionCacheOptions } from './records.js';
export * from './sessions.js';
export * from './stores.js';
export * from './working.js';
