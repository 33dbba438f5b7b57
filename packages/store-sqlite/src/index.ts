export type { SqliteConnectionOptions } from './connection.js';
export { type SetupReport, SqliteRecordBackend, type SqliteRecordBackendOptions } from './record-backend.js';
export type { Ranking } from './search-settings.js';
export { createSqliteStores, type SqliteStores, type SqliteStoresOptions } from './stores.js';
export { SqliteVectorIndex, type SqliteVectorIndexOptions } from './vectors.js';
