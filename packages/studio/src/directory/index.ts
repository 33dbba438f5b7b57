import type { KiokuStores } from '../kioku.js';
import type { UserDirectory } from './directory.js';
import { jsonDirectory } from './json.js';
import { postgresDirectory } from './postgres.js';
import { redisDirectory } from './redis.js';
import { snapshotDirectory } from './snapshots.js';
import { sqliteDirectory } from './sqlite.js';

export type { PartitionPage, PartitionQuery, PartitionSummary, UserDirectory } from './directory.js';
export { snapshotDirectory };

/** Where a store lives, as `kioku`'s `--store` names it (the CLI's parsed backend spec). */
export type DirectorySource =
  | { type: 'json'; directory: string }
  | { type: 'sqlite'; file: string }
  | { type: 'postgres'; url: string; schema?: string | undefined }
  | { type: 'redis'; url: string; prefix?: string | undefined };

/**
 * The user directory of a backend: its own read connection (SQLite read-only, one PostgreSQL connection,
 * one Redis connection), opened with the driver the store adapter already uses.
 */
export function openDirectory(
  source: DirectorySource | { type: 'stores'; stores: KiokuStores },
): Promise<UserDirectory> {
  switch (source.type) {
    case 'json':
      return Promise.resolve(jsonDirectory(source.directory));
    case 'sqlite':
      return sqliteDirectory(source.file);
    case 'postgres':
      return postgresDirectory(source.url, source.schema);
    case 'redis':
      return redisDirectory(source.url, source.prefix);
    case 'stores':
      return Promise.resolve(snapshotDirectory(source.stores));
  }
}
