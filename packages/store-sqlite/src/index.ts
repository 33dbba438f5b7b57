export type { SqliteStoreOptions } from './base.js';
export * from './connection.js';
export * from './facts.js';
export { type Ranking, type SearchSettings, scopeToken } from './search.js';
