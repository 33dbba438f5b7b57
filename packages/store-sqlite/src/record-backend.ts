import type { KiokuStores, StoreKind } from '@kioku/core';
import { StorageError } from '@kioku/core';
import {
  type PartitionRef,
  type RecordChanges,
  type StorageBackend,
  type StoredRecord,
  type StoresOverBackendOptions,
  storesOverBackend,
} from '@kioku/core/adapter';
import Database from 'better-sqlite3';

export interface SqliteRecordBackendOptions {
  /** The database file (created when missing), or `:memory:`. */
  file: string;
  /** How long a write waits for another connection's lock (default 5 s). */
  busyTimeoutMs?: number;
}

/**
 * The storage seam of `@kioku/core/adapter` on SQLite: every kind's records in one table
 * (`kioku_records`: partition, key, JSON, in insertion order by rowid) and one version row per partition
 * (`kioku_record_partitions`, kept when the partition empties, so a version never comes back). Each
 * `apply` is one immediate transaction that checks the version first. `setup()` creates both tables
 * (idempotent); they sit beside store-sqlite's own tables and share nothing with them.
 *
 * This is the seam's SQL reference, not `createSqliteStores`'s layout: the native stores keep columns,
 * FTS5 indexes and search statistics per kind, and stay the default for large partitions.
 */
export class SqliteRecordBackend implements StorageBackend {
  readonly #db: Database.Database;
  /** Prepared on first use, after `setup()` made the tables. */
  #prepared: ReturnType<typeof prepare> | undefined;

  constructor(options: SqliteRecordBackendOptions) {
    try {
      this.#db = new Database(options.file);
      this.#db.pragma(`busy_timeout = ${Math.max(0, Math.trunc(options.busyTimeoutMs ?? 5000))}`);
      if (options.file !== ':memory:') this.#db.pragma('journal_mode = WAL');
    } catch (error) {
      throw new StorageError(`Could not open SQLite database ${options.file}: ${(error as Error).message}`, {
        cause: error,
        details: { file: options.file },
      });
    }
  }

  async setup(): Promise<void> {
    this.#db.exec(SCHEMA);
  }

  async close(): Promise<void> {
    if (this.#db.open) this.#db.close();
  }

  get #sql(): ReturnType<typeof prepare> {
    this.#prepared ??= prepare(this.#db);
    return this.#prepared;
  }

  async scan(ref: PartitionRef): Promise<{ version: number; records: StoredRecord[] }> {
    const sql = this.#sql;
    const label = labelOf(ref);
    return this.#db.transaction(() => ({
      version: (sql.version.pluck().get(label) as number | undefined) ?? 0,
      records: sql.records.all(label) as StoredRecord[],
    }))();
  }

  async version(ref: PartitionRef): Promise<number> {
    return (this.#sql.version.pluck().get(labelOf(ref)) as number | undefined) ?? 0;
  }

  async apply(ref: PartitionRef, expectedVersion: number, changes: RecordChanges): Promise<number | null> {
    const sql = this.#sql;
    const label = labelOf(ref);
    return this.#db
      .transaction((): number | null => {
        const version = (sql.version.pluck().get(label) as number | undefined) ?? 0;
        if (version !== expectedVersion) return null;
        for (const key of changes.delete) sql.remove.run(label, key);
        for (const { key, json, append } of changes.put) {
          // A new rowid puts an appended record after every other one; an update in place keeps its rowid.
          if (append) {
            sql.remove.run(label, key);
            sql.insert.run(label, key, json);
          } else sql.update.run(json, label, key);
        }
        sql.upsertVersion.run(label, ref.kind, ref.userId, ref.agentId ?? '', ref.name ?? '', version + 1);
        return version + 1;
      })
      .immediate();
  }

  async replace(ref: PartitionRef, records: readonly StoredRecord[]): Promise<void> {
    const sql = this.#sql;
    const label = labelOf(ref);
    this.#db
      .transaction(() => {
        const version = (sql.version.pluck().get(label) as number | undefined) ?? 0;
        sql.removeAll.run(label);
        for (const { key, json } of records) sql.insert.run(label, key, json);
        sql.upsertVersion.run(label, ref.kind, ref.userId, ref.agentId ?? '', ref.name ?? '', version + 1);
      })
      .immediate();
  }

  async listPartitions(kind: StoreKind, userId?: string): Promise<PartitionRef[]> {
    const rows = (
      userId === undefined ? this.#sql.partitions.all(kind) : this.#sql.userPartitions.all(kind, userId)
    ) as Array<{ userId: string; agentId: string; name: string }>;
    return rows.map((r) => ({
      kind,
      userId: r.userId,
      ...(r.agentId === '' ? {} : { agentId: r.agentId }),
      ...(r.name === '' ? {} : { name: r.name }),
    }));
  }
}

/** All six stores over one SQLite file through the storage seam. Call `await stores.setup()` first. */
export function createSqliteRecordStores(
  options: SqliteRecordBackendOptions & StoresOverBackendOptions,
): KiokuStores & { backend: SqliteRecordBackend } {
  const { file, busyTimeoutMs, ...stores } = options;
  const backend = new SqliteRecordBackend({
    file,
    ...(busyTimeoutMs === undefined ? {} : { busyTimeoutMs }),
  });
  return { backend, ...storesOverBackend(backend, stores) };
}

/** One text per partition: JSON of its four parts, so no separator in an id can make two refs meet. */
function labelOf(ref: PartitionRef): string {
  return JSON.stringify([ref.kind, ref.userId, ref.agentId ?? '', ref.name ?? '']);
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS kioku_record_partitions (
  label TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  user_id TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  name TEXT NOT NULL,
  version INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS kioku_record_partitions_user ON kioku_record_partitions (kind, user_id);
CREATE TABLE IF NOT EXISTS kioku_records (
  seq INTEGER PRIMARY KEY,
  label TEXT NOT NULL,
  key TEXT NOT NULL,
  json TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS kioku_records_key ON kioku_records (label, key);
CREATE INDEX IF NOT EXISTS kioku_records_order ON kioku_records (label, seq);
`;

function prepare(db: Database.Database) {
  return {
    version: db.prepare('SELECT version FROM kioku_record_partitions WHERE label = ?'),
    records: db.prepare('SELECT key, json FROM kioku_records WHERE label = ? ORDER BY seq'),
    remove: db.prepare('DELETE FROM kioku_records WHERE label = ? AND key = ?'),
    removeAll: db.prepare('DELETE FROM kioku_records WHERE label = ?'),
    insert: db.prepare('INSERT INTO kioku_records (label, key, json) VALUES (?, ?, ?)'),
    update: db.prepare('UPDATE kioku_records SET json = ? WHERE label = ? AND key = ?'),
    upsertVersion: db.prepare(
      `INSERT INTO kioku_record_partitions (label, kind, user_id, agent_id, name, version) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (label) DO UPDATE SET version = excluded.version`,
    ),
    partitions: db.prepare(
      `SELECT user_id AS userId, agent_id AS agentId, name FROM kioku_record_partitions p
       WHERE kind = ? AND EXISTS (SELECT 1 FROM kioku_records r WHERE r.label = p.label) ORDER BY label`,
    ),
    userPartitions: db.prepare(
      `SELECT user_id AS userId, agent_id AS agentId, name FROM kioku_record_partitions p
       WHERE kind = ? AND user_id = ? AND EXISTS (SELECT 1 FROM kioku_records r WHERE r.label = p.label) ORDER BY label`,
    ),
  };
}
