import type { KiokuStores, StoreKind } from '@kioku/core';
import type Database from 'better-sqlite3';
import { SqliteConnection } from './connection.js';
import { SqliteDetailStore } from './details.js';
import { SqliteDocumentStore } from './documents.js';
import { SqliteFactStore } from './facts.js';
import { SqlitePlanStore } from './plans.js';
import { SqliteSessionStore } from './sessions.js';
import { SqliteWorkingMemoryStore } from './working.js';

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

/** How many records of each kind a move brought into the records layout. */
export type MovedRecords = Record<StoreKind, number>;

/** A move that found nothing: 0 of every kind. */
export function nothingMoved(): MovedRecords {
  return Object.fromEntries(KINDS.map((kind) => [kind, 0])) as MovedRecords;
}

/** True when the database holds records in the native layout (`createSqliteStores` before 0.2). */
export function hasNativeRecords(db: Database.Database): boolean {
  const tables = new Set(
    db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'kioku\\_%' ESCAPE '\\'")
      .pluck()
      .all() as string[],
  );
  return NATIVE_TABLES.some(
    (table) => tables.has(table) && db.prepare(`SELECT 1 FROM ${table} LIMIT 1`).get() !== undefined,
  );
}

/**
 * Moves every record of the native layout in `db` into `records` (stores over the records layout of the
 * same database, set up): each kind's `snapshot()` into the records stores' `restore()`, then the native
 * tables emptied with none of their text left in the file (deletes with `secure_delete`, every native
 * FTS5 index merged, the write-ahead log truncated). One transaction: on any error nothing has moved.
 * The native tables themselves stay (empty), so an older version reading the file finds its schema.
 */
export async function moveNativeRecords(db: Database.Database, records: KiokuStores): Promise<MovedRecords> {
  const connection = new SqliteConnection({ database: db });
  const native = {
    facts: new SqliteFactStore({ connection }),
    documents: new SqliteDocumentStore({ connection }),
    plans: new SqlitePlanStore({ connection }),
    working: new SqliteWorkingMemoryStore({ connection }),
    sessions: new SqliteSessionStore({ connection }),
    details: new SqliteDetailStore({ connection }),
  };
  // An older native file is brought to the current native schema first, so its snapshot reads work.
  await connection.setup();
  const secureDelete = db.pragma('secure_delete', { simple: true }) as number;
  db.pragma('secure_delete = ON');
  const moved = nothingMoved();
  try {
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
    } catch (error) {
      if (db.inTransaction) db.exec('ROLLBACK');
      throw error;
    }
  } finally {
    db.pragma(`secure_delete = ${secureDelete}`);
  }
  db.pragma('wal_checkpoint(TRUNCATE)');
  return moved;
}
