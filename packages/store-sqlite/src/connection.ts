import { StorageError } from '@kioku/core';
import { noteQueryText } from '@kioku/core/adapter';
import Database from 'better-sqlite3';

export interface SqliteConnectionOptions {
  /** The database file (`setup()` creates it when missing), or `':memory:'`; give `file` or `database`. */
  file?: string;
  /** Instead of `file`: an open better-sqlite3 database. Its pragmas are left alone and `close()` keeps it open. */
  database?: Database.Database;
  /** How long a write waits for another connection's lock, in ms (default 5000; connections Kioku opens). */
  busyTimeoutMs?: number;
}

/**
 * One better-sqlite3 connection, shared by the record backend and the vector index of a bundle. Opened
 * lazily: constructing it touches no file. `open(true)` (what `setup()` calls) creates a missing file
 * and turns on WAL; every other use opens an existing file only, and a missing one is the StorageError
 * `notSetUp` gives. A connection Kioku opened gets `busy_timeout` and `secure_delete` (deleted text is
 * zeroed, not left in free pages); a database handed in keeps its pragmas and stays open on `close()`.
 */
export class SqliteConnection {
  readonly #options: SqliteConnectionOptions;
  readonly #owned: boolean;
  readonly #notSetUp: () => StorageError;
  #db: Database.Database | undefined;
  #closed = false;

  constructor(options: SqliteConnectionOptions, notSetUp: () => StorageError) {
    this.#owned = options.database === undefined;
    if ((options.file === undefined) === this.#owned) {
      throw new StorageError('Give exactly one of `file` (a path or ":memory:") and `database`.');
    }
    this.#options = options;
    this.#notSetUp = notSetUp;
  }

  /** The file, for messages (`'the database given'` for one handed in). */
  get file(): string {
    return this.#options.file ?? 'the database given';
  }

  /** The connection, opened on first use (an existing file only); a StorageError once closed. */
  get db(): Database.Database {
    if (this.#closed) throw closedError();
    return this.#db ?? this.open(false);
  }

  /** Opens the connection if it is not open yet; with `create`, a missing file is made and WAL turned on. */
  open(create: boolean): Database.Database {
    if (this.#closed) throw closedError();
    if (this.#db) {
      if (create) this.#walOn(this.#db);
      return this.#db;
    }
    const { file, database } = this.#options;
    let db: Database.Database;
    try {
      db = database ?? new Database(file!, { fileMustExist: !create && file !== ':memory:' });
      if (this.#owned) {
        reportStatements(db);
        db.pragma(`busy_timeout = ${Math.max(0, Math.trunc(this.#options.busyTimeoutMs ?? 5000))}`);
        db.pragma('secure_delete = ON');
      }
      // Unicode-aware lower case for the case-insensitive tag filter (SQLite's lower() folds ASCII only).
      db.function('kioku_lower', { deterministic: true }, (value: unknown) =>
        typeof value === 'string' ? value.toLowerCase() : value,
      );
    } catch (error) {
      if (!create && (error as { code?: string }).code === 'SQLITE_CANTOPEN') throw this.#notSetUp();
      throw new StorageError(`Could not open SQLite database ${file ?? ''}: ${(error as Error).message}`, {
        cause: error,
        details: { file },
      });
    }
    this.#db = db;
    if (create) this.#walOn(db);
    return db;
  }

  /** WAL is recorded in the file: set once by `setup()`, every later connection uses it. */
  #walOn(db: Database.Database): void {
    if (!this.#owned || this.#options.file === ':memory:') return;
    try {
      db.pragma('journal_mode = WAL');
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_NOTADB') throw this.notADatabase(error);
      throw new StorageError(`Opening ${this.file} failed: ${(error as Error).message}`, { cause: error });
    }
  }

  /** The error for a file that holds something else: named, with what to check. */
  notADatabase(cause: unknown): StorageError {
    return new StorageError(
      `${this.file} is not a SQLite database: check the path (a path where no file exists yet gets a new database).`,
      { cause, details: { file: this.file } },
    );
  }

  /**
   * After an erasure: the write-ahead log is checkpointed and truncated, so its old frames (which still
   * hold what was deleted) are gone from the disk too. A checkpoint a reader holds up is finished by the
   * next erasure or SQLite's own checkpoints.
   */
  truncateLog(): void {
    this.db.pragma('wal_checkpoint(TRUNCATE)');
  }

  /**
   * Runs `erase` (its own transaction) with `secure_delete` on, whatever the connection's setting (a
   * database handed in may have it off: the setting is put back after), then truncates the log.
   */
  eraseAndScrub<R>(erase: () => R): R {
    const db = this.db;
    const previous = db.pragma('secure_delete', { simple: true }) as number;
    try {
      if (previous !== 1) db.pragma('secure_delete = ON');
      const result = erase();
      this.truncateLog();
      return result;
    } finally {
      if (previous !== 1) db.pragma(`secure_delete = ${previous}`);
    }
  }

  /** Closes the connection when Kioku opened it (a database handed in stays open). Idempotent. */
  close(): void {
    this.#closed = true;
    if (this.#owned && this.#db?.open) this.#db.close();
  }
}

const closedError = () => new StorageError('The SQLite connection is closed: open the stores again.');

/**
 * Every statement prepared on a connection Kioku opened reports its SQL text when it runs (`noteQueryText`:
 * `db.query.text` on the store call's span when the app opted in; a no-op otherwise). The text as prepared,
 * with its `?` placeholders: the bound values are never seen.
 */
function reportStatements(db: Database.Database): void {
  const prepare = db.prepare.bind(db);
  db.prepare = ((source: string) => reporting(prepare(source))) as typeof db.prepare;
}

const RUNS = ['run', 'get', 'all', 'iterate'] as const;

function reporting<S extends Database.Statement>(statement: S): S {
  const source = statement.source;
  for (const method of RUNS) {
    const original = statement[method] as (...args: unknown[]) => unknown;
    Object.defineProperty(statement, method, {
      value: function (this: unknown, ...args: unknown[]) {
        noteQueryText(source);
        return original.apply(this, args);
      },
    });
  }
  return statement;
}
