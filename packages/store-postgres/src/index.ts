export {
  DEFAULT_DEADLINE_MS,
  DEFAULT_POOL_SIZE,
  DEFAULT_SCHEMA,
  type PostgresConnectionOptions,
  PostgresDatabase,
} from './database.js';
export { PostgresDetailStore, type PostgresDetailStoreOptions } from './details.js';
export { PostgresDocumentStore, type PostgresDocumentStoreOptions } from './documents.js';
export { isRetryablePostgresError } from './errors.js';
export { PostgresFactStore, type PostgresFactStoreOptions } from './facts.js';
export { MIGRATIONS_TABLE } from './migrations-table.js';
export { PostgresPlanStore } from './plans.js';
export { PostgresSessionStore, type PostgresSessionStoreOptions } from './sessions.js';
export { PostgresStore, type PostgresStoreOptions } from './store.js';
export { createPostgresStores, type PostgresStores, type PostgresStoresOptions } from './stores.js';
export { PostgresVectorIndex, type PostgresVectorIndexOptions } from './vectors.js';
export { type PostgresWorkingMemoryOptions, PostgresWorkingMemoryStore } from './working.js';
