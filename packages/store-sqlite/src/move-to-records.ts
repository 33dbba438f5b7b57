import type { KiokuStores, StoreKind } from '@kioku/core';
import { StorageError } from '@kioku/core';
import Database from 'better-sqlite3';
import { createSqliteRecordStores } from './record-backend.js';
import { createSqliteStores } from './stores.js';

/** The native layout's tables that hold records (their FTS5 indexes and counts follow by trigger). */
const NATIVE_TABLES = [
  'kioku_facts',
  'kioku_document_chunks',
  'kioku_documents',
  'kioku_plans',
  'kioku_working',
  'kioku_session_transcript',
  'kioku_session_kv',
  'kioku_sessions',
  'kioku_details',
] as const;

const KINDS: readonly StoreKind[] = ['facts', 'documents', 'plans', 'working', 'sessions', 'details'];

export type MovedRecords = Record<StoreKind, number>;

/**
 * Moves what `createSqliteStores` (the native layout) holds in `file` into the records layout of
 * `createSqliteRecordStores` in the same file: every kind, every user, each record as it was (ids,
 * versions, timestamps, expiry, transcripts), by each kind's `snapshot()` into the records stores'
 * `restore()` — then empties the native tables, leaving none of their text in the file (deletes with
 * `secure_delete`, every native FTS5 index merged, the write-ahead log truncated), so a later erasure in the
 * records layout is complete. All in one transaction: on any error nothing has moved.
 * Idempotent: with the native tables empty it writes nothing. A partition the records layout holds already
 * is replaced by the native one when both have it.
 */
export async function moveSqliteToRecords(file: string): Promise<MovedRecords> {
  const db = new Database(file, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    db.pragma('secure_delete = ON');
    const native = createSqliteStores({ database: db });
    await native.setup();
    const records = createSqliteRecordStores({ database: db });
    await records.setup();
    const moved = Object.fromEntries(KINDS.map((kind) => [kind, 0])) as MovedRecords;
    db.exec('BEGIN IMMEDIATE');
    try {
      for (const kind of KINDS) {
        const envelope = await (native[kind] as KiokuStores['facts']).snapshot({ allUsers: true });
        if (envelope.records.length === 0) continue;
        const report = await (records[kind] as KiokuStores['facts']).restore(envelope);
        moved[kind] = report.records;
      }
      for (const table of NATIVE_TABLES) db.prepare(`DELETE FROM ${table}`).run();
      // The deleted rows' terms stay in the FTS5 segments until they are merged.
      for (const table of NATIVE_TABLES) {
        const fts = `${table}_fts`;
        if (db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(fts))
          db.prepare(`INSERT INTO "${fts}"("${fts}") VALUES ('optimize')`).run();
      }
      db.exec('COMMIT');
      db.pragma('wal_checkpoint(TRUNCATE)');
    } catch (error) {
      if (db.inTransaction) db.exec('ROLLBACK');
      throw error instanceof StorageError
        ? error
        : new StorageError(`Moving ${file} to the records layout failed; nothing moved.`, { cause: error });
    }
    return moved;
  } finally {
    db.close();
  }
}
