export { NO_AGENT, type SqliteStoreOptions } from './base.js';
export {
  MIGRATIONS_FOLDER,
  MIGRATIONS_TABLE,
  type SetupReport,
  SqliteConnection,
  type SqliteConnectionOptions,
} from './connection.js';
export { SqliteDetailStore, type SqliteDetailStoreOptions } from './details.js';
export { SqliteDocumentStore, type SqliteDocumentStoreOptions } from './documents.js';
export { SqliteFactStore } from './facts.js';
export { type MovedRecords, moveSqliteToRecords } from './move-to-records.js';
export { SqlitePlanStore } from './plans.js';
export { SqliteRecordBackend, type SqliteRecordBackendOptions } from './record-backend.js';
export type { Ranking } from './search.js';
export { SqliteSessionStore, type SqliteSessionStoreOptions } from './sessions.js';
export {
  createSqliteNativeStores,
  createSqliteStores,
  type SqliteNativeStoresOptions,
  type SqliteStores,
  type SqliteStoresOptions,
} from './stores.js';
export { type SqliteWorkingMemoryOptions, SqliteWorkingMemoryStore } from './working.js';
