import type { Scope, StoreKind } from '@kioku/core';
import { StorageError } from '@kioku/core';
import type {
  ParsedDetailQuery,
  ParsedDocumentQuery,
  ParsedFactFilter,
  ParsedFactQuery,
  PartitionRef,
  RecordChanges,
  StorageBackend,
  StoredRecord,
} from '@kioku/core/adapter';
import type { DetailHit, DocumentChunkHit, FactHit } from '@kioku/core/store';
import type Database from 'better-sqlite3';
import { ANALYZER_SIGNATURE } from './analysis.js';
import { SqliteConnection, type SqliteConnectionOptions } from './connection.js';
import {
  RECORD_FACTS_SCHEMA,
  RECORD_SEARCH_COLUMNS,
  RecordFactIndex,
  SEARCH_COLUMN_NAMES,
} from './record-facts.js';
import {
  type DocumentHead,
  fillSearchColumns,
  headOfRecord,
  RecordTextSearch,
  recordSearchColumns,
  SEARCHED_KINDS,
} from './record-search.js';
import type { LexicalSearch } from './search.js';
import type { SearchSettings } from './search-settings.js';

export interface SqliteRecordBackendOptions extends SqliteConnectionOptions {
  /** Search ranking and candidate depth (see `Ranking`). */
  search?: Partial<SearchSettings>;
  /** Instead of `file` / `database`: a connection shared with a vector index (what `createSqliteStores` passes). */
  connection?: SqliteConnection;
}

/** What `setup()` did. */
export interface SetupReport {
  /** 1 when this call made the records tables, else 0. */
  migrationsApplied: number;
  /** True when the stored records' search columns were recomputed because core's analyzer changed. */
  reindexed: boolean;
}

/**
 * The storage seam of `@kioku/core/adapter` on SQLite: every kind's records in one table
 * (`kioku_records`: partition, key, JSON, in insertion order by rowid; the search columns of a fact, a
 * detail or a document chunk on its own row, see `record-facts.ts` and `record-search.ts`) and one version
 * row per partition (`kioku_record_partitions`, moved on by every write). A partition emptied by
 * `replace` (erasure) loses its row too, so no row keeps the user's id; a version still never comes back:
 * the highest version ever removed is kept, without any id, as `version_floor` in `kioku_record_meta`,
 * and a partition's first version is one above it. `apply` is one immediate transaction that checks the version
 * first; `insert` is one INSERT (a trigger moves the version). `setup()` creates the tables (idempotent).
 *
 * `createSqliteStores` is core's stores over this backend.
 */
export class SqliteRecordBackend implements StorageBackend {
  readonly #connection: SqliteConnection;
  /** Prepared on first use, once the schema was found current (or `setup()` made it). */
  #prepared: ReturnType<typeof prepare> | undefined;
  readonly #settings: Partial<SearchSettings>;
  #lexical: LexicalSearch | undefined;
  #facts: RecordFactIndex | undefined;
  #texts: RecordTextSearch | undefined;
  /** The write transactions, made once (better-sqlite3 wraps a function on every `transaction()` call). */
  #applyTx:
    | Database.Transaction<(ref: PartitionRef, expected: number, changes: RecordChanges) => number | null>
    | undefined;

  constructor(options: SqliteRecordBackendOptions) {
    const { connection, search, ...open } = options;
    if (connection && (open.file !== undefined || open.database !== undefined)) {
      throw new StorageError('Give `connection`, or `file` / `database`, not both.');
    }
    this.#connection = connection ?? new SqliteConnection(open, notSetUp);
    this.#settings = search ?? {};
  }

  /** The connection, opened on first use (an existing file only; `setup()` creates one). */
  get #db(): Database.Database {
    return this.#connection.db;
  }

  /** Throws a StorageError that says to call `setup()` unless the records layout is current. */
  #assertReady(db: Database.Database): void {
    let signature: string | undefined;
    try {
      signature = db.prepare("SELECT value FROM kioku_record_meta WHERE key = 'analyzer'").pluck().get() as
        | string
        | undefined;
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_NOTADB') {
        throw this.#connection.notADatabase(error);
      }
      throw notSetUp();
    }
    if (signature !== SEARCH_SIGNATURE) throw notSetUp();
  }

  /**
   * Creates the tables (idempotent; safe from several processes at once: one immediate transaction), and
   * fills the search columns again when core's analyzer changed since they were computed.
   * `migrationsApplied` is 1 when the tables were made; `reindexed` when existing records' search columns
   * were recomputed.
   */
  async setup(): Promise<SetupReport> {
    const db = this.#connection.open(true);
    return db
      .transaction((): SetupReport => {
        const existed =
          db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'kioku_records'").get() !==
          undefined;
        db.exec(SCHEMA);
        const search = db
          .prepare("SELECT value FROM kioku_record_meta WHERE key = 'analyzer'")
          .pluck()
          .get() as string | undefined;
        if (search === SEARCH_SIGNATURE) {
          db.exec(RECORD_FACTS_SCHEMA);
          return { migrationsApplied: 0, reindexed: false };
        }
        // The search columns follow core's analyzer: filled again when it changed.
        RecordFactIndex.clear(db);
        fillSearchColumns(db);
        db.prepare("INSERT OR REPLACE INTO kioku_record_meta (key, value) VALUES ('analyzer', ?)").run(
          SEARCH_SIGNATURE,
        );
        return { migrationsApplied: existed ? 0 : 1, reindexed: existed && search !== undefined };
      })
      .immediate();
  }

  async close(): Promise<void> {
    this.#connection.close();
  }

  get #sql(): ReturnType<typeof prepare> {
    const db = this.#db; // a StorageError once closed
    if (!this.#prepared) {
      this.#assertReady(db);
      this.#prepared = prepare(db);
    }
    return this.#prepared;
  }

  get #lexicalSearch(): LexicalSearch {
    if (!this.#lexical) this.#sql; // the schema checked first
    this.#lexical ??= RecordFactIndex.lexical(this.#db, this.#settings);
    return this.#lexical;
  }

  get #factIndex(): RecordFactIndex {
    this.#facts ??= new RecordFactIndex(this.#db, this.#lexicalSearch);
    return this.#facts;
  }

  get #textSearch(): RecordTextSearch {
    this.#texts ??= new RecordTextSearch(this.#db, this.#lexicalSearch);
    return this.#texts;
  }

  /** Document search pushed down to FTS5 over the chunks' search columns, ranked as core ranks. */
  async searchDocuments(scope: Scope, query: ParsedDocumentQuery): Promise<DocumentChunkHit[]> {
    return this.#textSearch.documents(labelOf({ kind: 'documents', ...scope }), query);
  }

  /** Detail search pushed down to FTS5 over the details' search columns, ranked as core ranks. */
  async searchDetails(scope: Scope, query: ParsedDetailQuery): Promise<DetailHit[]> {
    return this.#textSearch.details(labelOf({ kind: 'details', userId: scope.userId }), query);
  }

  /** Fact search pushed down to FTS5 over the facts' search rows, ranked as core ranks. */
  /** With `ranking: 'bm25'`, searches are FTS5's order always, not core's (even over a decoded partition). */
  get ownRanking(): boolean {
    return this.#settings.ranking === 'bm25';
  }

  async searchFacts(scope: Scope, query: ParsedFactQuery): Promise<FactHit[]> {
    return this.#factIndex.search(labelOf({ kind: 'facts', ...scope }), query);
  }

  async countFacts(scope: Scope, filter: ParsedFactFilter): Promise<number> {
    return this.#factIndex.count(labelOf({ kind: 'facts', ...scope }), filter);
  }

  async scan(ref: PartitionRef): Promise<{ version: number; records: StoredRecord[] }> {
    const sql = this.#sql;
    const label = labelOf(ref);
    return this.#db.transaction(() => {
      const version = (sql.version.pluck().get(label) as number | undefined) ?? 0;
      // Read through the key index and put in insertion order here: an index on (label, seq) for this
      // alone would cost every write (see the bench README), and sorting numbers here is cheap.
      const rows = sql.records.raw().all(label) as Array<[number, string, string]>;
      rows.sort((a, b) => a[0] - b[0]);
      return { version, records: rows.map(([, key, json]) => ({ key, json })) };
    })();
  }

  async version(ref: PartitionRef): Promise<number> {
    return (this.#sql.version.pluck().get(labelOf(ref)) as number | undefined) ?? 0;
  }

  async apply(ref: PartitionRef, expectedVersion: number, changes: RecordChanges): Promise<number | null> {
    this.#applyTx ??= this.#db.transaction(this.#applyNow.bind(this));
    return this.#applyTx.immediate(ref, expectedVersion, changes);
  }

  /** `apply` inside its transaction. */
  #applyNow(ref: PartitionRef, expectedVersion: number, changes: RecordChanges): number | null {
    const sql = this.#sql;
    const label = labelOf(ref);
    if (!this.#bump(ref, label, expectedVersion)) return null;
    const searched = SEARCHED_KINDS.includes(ref.kind);
    const headOf = this.#headLookup(ref, label, changes.put);
    for (const key of changes.delete) sql.remove.run(label, key);
    for (const { key, json, append, value } of changes.put) {
      // A new rowid puts an appended record after every other one; an update in place keeps its rowid.
      if (append) {
        sql.remove.run(label, key);
        sql.insert.run(label, key, json, ...recordSearchColumns(ref.kind, key, json, value, headOf));
      } else if (searched && key !== '') {
        sql.updateSearch.run(json, ...recordSearchColumns(ref.kind, key, json, value, headOf), label, key);
      } else sql.update.run(json, label, key);
    }
    // Past `expectedVersion + 1`: each inserted row moved it on too (see `kioku_records_version`).
    return sql.version.pluck().get(label) as number;
  }

  /**
   * Where a document chunk's head (title, tags) is found: among the records written with it (a document is
   * stored whole, head first), else in the table. Other kinds need none.
   */
  #headLookup(
    ref: PartitionRef,
    label: string,
    records: ReadonlyArray<StoredRecord & { readonly value?: unknown }>,
  ): (id: string) => DocumentHead | undefined {
    if (ref.kind !== 'documents') return NO_HEADS;
    const heads = new Map<string, DocumentHead>();
    for (const { key, json, value } of records) {
      const head = headOfRecord(key, json, value);
      if (head) heads.set(key, head);
    }
    return (id) => {
      const found = heads.get(id);
      if (found) return found;
      const json = this.#sql.json.pluck().get(label, id) as string | undefined;
      return json === undefined ? undefined : headOfRecord(id, json);
    };
  }

  /** Moves the partition from `expected` to the next version; false when it is not at `expected`. */
  #bump(ref: PartitionRef, label: string, expected: number): boolean {
    const sql = this.#sql;
    if (sql.bump.run(label, expected).changes === 1) return true;
    if (expected !== 0 || sql.version.get(label) !== undefined) return false;
    sql.insertFirst.run(label, ref.kind, ref.userId, ref.agentId ?? '', ref.name ?? '');
    return true;
  }

  async get(ref: PartitionRef, key: string): Promise<string | undefined> {
    return this.#sql.json.pluck().get(labelOf(ref), key) as string | undefined;
  }

  /**
   * One INSERT, atomic by itself (a write statement takes the write lock as it starts, as BEGIN IMMEDIATE
   * would): the key's unique index refuses a record the partition holds already, and the row's trigger
   * moves the partition's version on. No transaction around it (two statements fewer per create).
   */
  async insert(ref: PartitionRef, record: InsertedRecord): Promise<boolean> {
    const label = labelOf(ref);
    const headOf = this.#headLookup(ref, label, [record]);
    const search = recordSearchColumns(ref.kind, record.key, record.json, record.value, headOf);
    return this.#sql.insertNew.run(label, record.key, record.json, ...search).changes === 1;
  }

  async replace(ref: PartitionRef, records: readonly StoredRecord[]): Promise<void> {
    const sql = this.#sql;
    const label = labelOf(ref);
    const removed = this.#db
      .transaction(() => {
        const headOf = this.#headLookup(ref, label, records);
        const { changes } = sql.removeAll.run(label);
        if (records.length === 0) {
          // Emptied: the partition row (which names the user) goes; its version becomes the floor.
          const dropped = sql.dropPartition.pluck().get(label) as number | undefined;
          if (dropped !== undefined) sql.raiseFloor.run(dropped, dropped);
          return changes + (dropped === undefined ? 0 : 1);
        }
        for (const { key, json } of records) {
          sql.insert.run(label, key, json, ...recordSearchColumns(ref.kind, key, json, undefined, headOf));
        }
        sql.upsertNext.run(label, ref.kind, ref.userId, ref.agentId ?? '', ref.name ?? '');
        return changes;
      })
      .immediate();
    if (records.length === 0 && removed > 0) this.#scrub(ref, label);
  }

  /**
   * After a partition was emptied (erasure): none of its text stays in the file's bytes. Deleted rows are
   * zeroed already (`secure_delete`); the FTS5 index of facts is merged, so no segment keeps the deleted
   * terms, and the write-ahead log is checkpointed and truncated.
   */
  #scrub(ref: PartitionRef, label: string): void {
    if (SEARCHED_KINDS.includes(ref.kind)) this.#factIndex.emptied(label);
    this.#connection.truncateLog();
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

type InsertedRecord = StoredRecord & { readonly value?: unknown };

/** The search columns follow core's analyzer: a new one fills them again on `setup()`. */
const SEARCH_SIGNATURE = `records/${ANALYZER_SIGNATURE}`;

/** The head lookup of kinds without document chunks. */
const NO_HEADS = (): undefined => undefined;

export function notSetUp(): StorageError {
  return new StorageError(
    'The Kioku SQLite tables are not set up in this database (or were made by another version): call `await stores.setup()` first.',
  );
}

/** One text per partition: JSON of its four parts, so no separator in an id can make two refs meet. */
function labelOf(ref: PartitionRef): string {
  return JSON.stringify([ref.kind, ref.userId, ref.agentId ?? '', ref.name ?? '']);
}

/** A new partition's first version: one above every version an emptied partition ever had. */
const FIRST_VERSION = `(SELECT COALESCE(MAX(CAST(value AS INTEGER)), 0) + 1 FROM kioku_record_meta WHERE key = 'version_floor')`;

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
  json TEXT NOT NULL,
  ${RECORD_SEARCH_COLUMNS.join(',\n  ')}
);
CREATE UNIQUE INDEX IF NOT EXISTS kioku_records_key ON kioku_records (label, key);
CREATE TABLE IF NOT EXISTS kioku_record_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
DROP TRIGGER IF EXISTS kioku_records_version;
CREATE TRIGGER kioku_records_version AFTER INSERT ON kioku_records BEGIN
  UPDATE kioku_record_partitions SET version = version + 1 WHERE label = new.label;
  INSERT INTO kioku_record_partitions (label, kind, user_id, agent_id, name, version)
    SELECT new.label, json_extract(new.label, '$[0]'), json_extract(new.label, '$[1]'),
      json_extract(new.label, '$[2]'), json_extract(new.label, '$[3]'), ${FIRST_VERSION}
    WHERE NOT EXISTS (SELECT 1 FROM kioku_record_partitions WHERE label = new.label);
END;
`;

function prepare(db: Database.Database) {
  return {
    version: db.prepare('SELECT version FROM kioku_record_partitions WHERE label = ?'),
    records: db.prepare('SELECT seq, key, json FROM kioku_records WHERE label = ?'),
    json: db.prepare('SELECT json FROM kioku_records WHERE label = ? AND key = ?'),
    insertNew: db.prepare(
      `INSERT INTO kioku_records (label, key, json, ${SEARCH_COLUMN_NAMES}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (label, key) DO NOTHING`,
    ),
    bump: db.prepare(
      'UPDATE kioku_record_partitions SET version = version + 1 WHERE label = ? AND version = ?',
    ),
    remove: db.prepare('DELETE FROM kioku_records WHERE label = ? AND key = ?'),
    removeAll: db.prepare('DELETE FROM kioku_records WHERE label = ?'),
    insert: db.prepare(
      `INSERT INTO kioku_records (label, key, json, ${SEARCH_COLUMN_NAMES}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    update: db.prepare('UPDATE kioku_records SET json = ? WHERE label = ? AND key = ?'),
    updateSearch: db.prepare(
      `UPDATE kioku_records SET json = ?, category = ?, tags = ?, updated_at = ?, search_terms = ?, search_length = ?
       WHERE label = ? AND key = ?`,
    ),
    insertFirst: db.prepare(
      `INSERT INTO kioku_record_partitions (label, kind, user_id, agent_id, name, version)
       VALUES (?, ?, ?, ?, ?, ${FIRST_VERSION})`,
    ),
    upsertNext: db.prepare(
      `INSERT INTO kioku_record_partitions (label, kind, user_id, agent_id, name, version)
       VALUES (?, ?, ?, ?, ?, ${FIRST_VERSION})
       ON CONFLICT (label) DO UPDATE SET version = version + 1`,
    ),
    dropPartition: db.prepare('DELETE FROM kioku_record_partitions WHERE label = ? RETURNING version'),
    raiseFloor: db.prepare(
      `INSERT INTO kioku_record_meta (key, value) VALUES ('version_floor', ?)
       ON CONFLICT (key) DO UPDATE SET value = MAX(CAST(value AS INTEGER), CAST(? AS INTEGER))`,
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
