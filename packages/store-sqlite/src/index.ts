export { agentColumn, NO_AGENT, SqliteStoreBase, type SqliteStoreOptions } from './base.js';
export * from './connection.js';
export * from './details.js';
export * from './documents.js';
export * from './facts.js';
export * from './plans.js';
export {
  createSqliteRecordStores,
  SqliteRecordBackend,
  type SqliteRecordBackendOptions,
} from './record-backend.js';
export {
  DEFAULT_SEARCH,
  ftsExpression,
  quoteFts,
  type Ranking,
  type SearchSettings,
  scopeToken,
} from './search.js';
export * from './sessions.js';
export * from './stores.js';
export * from './working.js';
