import { fileURLToPath } from 'node:url';
import { KiokuError, StorageError, type StoreKind } from '@kioku/core';
import Database from 'better-sqlite3';
import { type BetterSQLite3Database, drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { ANALYZER_SIGNATURE } from './analysis.js';
import { rebuildSearchTerms } from './reindex.js';
import * as schema from './schema.js';
import { withStatementCache } from './statement-cache.js';

/** Kioku's own migrations table, so it never collides with the host application's `__drizzle_migrations`. */
export const MIGRATIONS_TABLE = '__kioku_migrations';

/** The drizzle-kit migrations shipped with the package (`drizzle/`, beside `dist/` and `src/`). */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../drizzle', import.meta.url));

const ANALYZER_KEY = 'analyzer';

export type KiokuDrizzle = BetterSQLite3Database<typeof schema>;

export interface SqliteConnectionOptions {
  /** A database file (created when missing) or `':memory:'`. */
  file?: string;
  /** An open better-sqlite3 database. Kioku leaves its pragmas alone and does not close it. */
  database?: Database.Database;
  /** How long a write waits for another connection's lock, in ms (default 5000; own connections only). */
  busyTimeoutMs?: number;
}

export interface SetupReport {
  /** Migrations applied by this call (0 when the schema was already current). */
  migrationsApplied: number;
  /** True when the search terms were recomputed because the analyzer changed. */
  reindexed: boolean;
  /**
   * The records layout's setup only: how many records of each kind it moved from the native layout it
   * found in the database (absent when there were none).
   */
  moved?: Record<StoreKind, number>;
}

/**
 * One SQLite connection shared by any number of Kioku stores. It is opened lazily: constructing it (or a
 * store) touches nothing. `setup()` opens the file (creating it when missing), turns on WAL and applies the
 * migrations. A store operation opens an existing file but never creates one: before `setup()` it fails
 * with a StorageError that says to call it. Writes run in `BEGIN IMMEDIATE` transactions, so two
 * connections (or two processes) never interleave inside one operation; a busy database is waited for up
 * to `busyTimeoutMs`.
 */
export class SqliteConnection {
  readonly #options: SqliteConnectionOptions;
  readonly #owned: boolean;
  #db: Database.Database | undefined;
  /** `fn => fn()` as a better-sqlite3 transaction, made once: making one per call cost more than a read. */
  #transaction: Database.Transaction<<R>(fn: () => R) => R> | undefined;
  #orm: KiokuDrizzle | undefined;
  #closed = false;
  #ready = false;

  constructor(options: SqliteConnectionOptions) {
    if ((options.file === undefined) === (options.database === undefined)) {
      throw new KiokuError('VALIDATION', 'Give exactly one of `file` (a path or ":memory:") and `database`.');
    }
    this.#options = options;
    this.#owned = options.database === undefined;
  }

  /** The better-sqlite3 connection, opened on first use (an existing file only; `setup()` creates it). */
  get raw(): Database.Database {
    return this.#db ?? this.#open(false);
  }

  get orm(): KiokuDrizzle {
    if (!this.#orm) this.raw;
    return this.#orm!;
  }

  /** True while the connection is open (false before its first use and after `close()`). */
  get open(): boolean {
    return this.#db?.open ?? false;
  }

  #open(create: boolean): Database.Database {
    if (this.#closed) throw new StorageError('The SQLite connection is closed.');
    const file = this.#options.file;
    let db: Database.Database;
    if (this.#options.database) {
      db = this.#options.database;
    } else {
      try {
        db = new Database(file!, { fileMustExist: !create && file !== ':memory:' });
      } catch (error) {
        if (!create && (error as { code?: string }).code === 'SQLITE_CANTOPEN') throw notSetUp();
        throw new StorageError(`Cannot open SQLite database "${file}".`, { cause: error });
      }
      db.pragma(`busy_timeout = ${Math.max(0, Math.trunc(this.#options.busyTimeoutMs ?? 5000))}`);
      // Deleted text is zeroed, not left in free pages (an erased user's words, the old FTS5 segments).
      db.pragma('secure_delete = ON');
    }
    // Unicode-aware lower case for the case-insensitive tag filter (SQLite's lower() folds ASCII only).
    db.function('kioku_lower', { deterministic: true }, (value: unknown) =>
      typeof value === 'string' ? value.toLowerCase() : value,
    );
    this.#orm = drizzle(withStatementCache(db), { schema });
    this.#transaction = db.transaction(<R>(fn: () => R): R => fn());
    this.#db = db;
    return db;
  }

  /**
   * Create or upgrade the schema (idempotent; safe to run from several processes at once), and rebuild
   * the search terms when Kioku's analyzer has changed since they were computed.
   */
  async setup(): Promise<SetupReport> {
    const db = this.#db ?? this.#open(true);
    // WAL is persistent: set once here, every later connection to the file uses it.
    try {
      if (this.#owned && this.#options.file !== ':memory:') db.pragma('journal_mode = WAL');
    } catch (error) {
      if ((error as { code?: unknown }).code === 'SQLITE_NOTADB') throw this.#notADatabase(error);
      throw new StorageError(`Opening ${this.#options.file} failed.`, { cause: error });
    }
    const before = this.#appliedMigrations();
    try {
      migrate(this.orm, { migrationsFolder: MIGRATIONS_FOLDER, migrationsTable: MIGRATIONS_TABLE });
    } catch (error) {
      // Another process may have applied the same migrations between our check and our BEGIN; its
      // CREATE TABLEs make ours fail. That is success as long as the schema is now current.
      if (!this.#schemaCurrent()) {
        throw new StorageError('Applying the Kioku SQLite migrations failed.', { cause: error });
      }
    }
    const reindexed = this.write(() => {
      const current = this.orm.select().from(schema.meta).all();
      const stored = current.find((row) => row.key === ANALYZER_KEY)?.value;
      if (stored === ANALYZER_SIGNATURE) return false;
      if (stored !== undefined) rebuildSearchTerms(this.orm);
      this.orm
        .insert(schema.meta)
        .values({ key: ANALYZER_KEY, value: ANALYZER_SIGNATURE })
        .onConflictDoUpdate({ target: schema.meta.key, set: { value: ANALYZER_SIGNATURE } })
        .run();
      return stored !== undefined;
    });
    this.#ready = true;
    return { migrationsApplied: this.#appliedMigrations() - before, reindexed };
  }

  /** Close the connection (when Kioku opened it). Idempotent. */
  close(): void {
    this.#closed = true;
    if (this.#owned && this.#db?.open) this.#db.close();
  }

  /** Throws a clear StorageError unless the schema is set up and current. Checked once per connection. */
  assertReady(): void {
    if (this.#ready) return;
    if (!this.raw.open) throw new StorageError('The SQLite connection is closed.');
    if (!this.#schemaCurrent()) throw notSetUp();
    const analyzer = this.raw
      .prepare('SELECT value FROM kioku_meta WHERE key = ?')
      .pluck()
      .get(ANALYZER_KEY) as string | undefined;
    if (analyzer !== ANALYZER_SIGNATURE) {
      throw new StorageError(
        'The search index was built by another version of the Kioku analyzer: call `await store.setup()` to rebuild it.',
      );
    }
    this.#ready = true;
  }

  /** Run `fn` in a write transaction (BEGIN IMMEDIATE). KiokuErrors pass through; SQLite errors become StorageErrors. */
  write<R>(fn: () => R): R {
    return this.#run(() => this.#transactionOf().immediate(fn) as R);
  }

  /**
   * Run `erase` in a write transaction and leave none of what it deleted in the file's bytes: the deletes
   * run with `secure_delete` on (freed cells and pages are zeroed; the connection's own setting is put
   * back after), every FTS5 index is merged ('optimize': the segments that still held the deleted terms
   * are rewritten without them), and the write-ahead log is checkpointed and truncated, so its old frames
   * with the deleted text are gone. A checkpoint that a reader holds up is finished by the next erasure
   * or SQLite's own checkpoints. Costs a rewrite of the search indexes: meant for erasure, not for
   * every delete.
   */
  eraseAndScrub<R>(erase: () => R): R {
    const db = this.raw;
    const previous = db.pragma('secure_delete', { simple: true }) as number;
    try {
      db.pragma('secure_delete = ON');
      const result = this.write(erase);
      const indexes = db
        .prepare(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'kioku\\_%\\_fts' ESCAPE '\\' AND sql LIKE '%fts5%'",
        )
        .pluck()
        .all() as string[];
      this.write(() => {
        for (const name of indexes) db.prepare(`INSERT INTO "${name}"("${name}") VALUES ('optimize')`).run();
      });
      this.#run(() => db.pragma('wal_checkpoint(TRUNCATE)'));
      return result;
    } finally {
      db.pragma(`secure_delete = ${previous}`);
    }
  }

  /** Run `fn` in a read transaction, so several statements see one consistent state. */
  read<R>(fn: () => R): R {
    return this.#run(() => this.#transactionOf().deferred(fn) as R);
  }

  /** Run `fn`, which issues a single statement (atomic by itself), without a transaction around it. */
  statement<R>(fn: () => R): R {
    return this.#run(fn);
  }

  #transactionOf(): Database.Transaction<<R>(fn: () => R) => R> {
    if (!this.#transaction) this.raw;
    return this.#transaction!;
  }

  #run<R>(fn: () => R): R {
    try {
      return fn();
    } catch (error) {
      if (error instanceof KiokuError) throw error;
      const code = (error as { code?: unknown }).code;
      throw new StorageError(`SQLite failed: ${(error as Error).message}`, {
        cause: error,
        details: typeof code === 'string' ? { sqliteCode: code } : {},
      });
    }
  }

  #appliedMigrations(): number {
    try {
      return this.raw.prepare(`SELECT count(*) FROM "${MIGRATIONS_TABLE}"`).pluck().get() as number;
    } catch {
      return 0;
    }
  }

  #schemaCurrent(): boolean {
    const latest = readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER }).at(-1)?.folderMillis ?? 0;
    try {
      const applied = this.raw.prepare(`SELECT max(created_at) FROM "${MIGRATIONS_TABLE}"`).pluck().get();
      return Number(applied ?? 0) >= latest;
    } catch (error) {
      if ((error as { code?: unknown }).code === 'SQLITE_NOTADB') throw this.#notADatabase(error);
      return false;
    }
  }

  #notADatabase(cause: unknown): StorageError {
    const file = this.#options.file ?? 'the database given';
    return new StorageError(
      `${file} is not a SQLite database: check the path (a path where no file exists yet gets a new database).`,
      { cause, details: { file } },
    );
  }
}

const notSetUp = () =>
  new StorageError(
    'The Kioku SQLite schema is missing or older than this version of @kioku/store-sqlite: call `await store.setup()` first.',
  );
