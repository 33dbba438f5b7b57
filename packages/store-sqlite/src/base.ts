import { type Clock, type Scope, type StoreKind, ValidationError } from '@kioku/core';
import {
  makeEnvelope,
  parseOrThrow,
  parseScope,
  planRestore,
  type RestoreSpec,
  systemClock,
} from '@kioku/core/adapter';
import {
  type RestoreOptions,
  type RestoreReport,
  type SnapshotEnvelope,
  type SnapshotSelector,
  SnapshotSelectorSchema,
} from '@kioku/core/store';
import { type SetupReport, SqliteConnection, type SqliteConnectionOptions } from './connection.js';
import { LexicalSearch, type SearchSettings } from './search.js';

type RecordSchema<R> = Parameters<typeof planRestore<R>>[1];

export interface SqliteStoreOptions extends SqliteConnectionOptions {
  /** A connection shared with other stores (see `createSqliteStores`); instead of `file` / `database`. */
  connection?: SqliteConnection;
  /** Time source for timestamps and TTLs (default: the system clock). */
  clock?: Clock;
  /** Search ranking and candidate depth. */
  search?: Partial<SearchSettings>;
}

/** Scopes already validated, by value (ids cannot contain U+0000), so hot paths skip re-running zod. */
const validScopes = new Set<string>();
const MAX_VALID_SCOPES = 10_000;

/**
 * `parseScope` with a memo: a scope whose ids were validated before is not validated again (~5 µs of a
 * ~10 µs read). Anything else goes through `parseScope`, with its errors.
 */
export function checkScope(scope: Scope): Scope {
  const { userId, agentId, threadId } = (scope ?? {}) as Partial<Record<keyof Scope, unknown>>;
  if (
    typeof userId === 'string' &&
    (agentId === undefined || typeof agentId === 'string') &&
    (threadId === undefined || typeof threadId === 'string')
  ) {
    const key = `${userId}\u0000${agentId ?? '\u0001'}\u0000${threadId ?? '\u0001'}`;
    if (validScopes.has(key)) return { userId, agentId, threadId };
    const parsed = parseScope(scope);
    if (validScopes.size >= MAX_VALID_SCOPES) validScopes.clear();
    validScopes.add(key);
    return parsed;
  }
  return parseScope(scope);
}

/** `''` stands for "no agent" in partition columns; records carry `agentId: undefined` instead. */
export const NO_AGENT = '';

export const agentColumn = (agentId: string | undefined): string => agentId ?? NO_AGENT;
export const agentOf = (column: string | null): string | undefined => (column ? column : undefined);

/** The connection, clock and search shared by every SQLite store; `setup()` and `close()`. */
export abstract class SqliteStoreBase {
  protected readonly connection: SqliteConnection;
  protected readonly clock: Clock;
  protected readonly lexical: LexicalSearch;

  constructor(options: SqliteStoreOptions) {
    if (options.connection && (options.file !== undefined || options.database !== undefined)) {
      throw new ValidationError('Give `connection`, or `file` / `database`, not both.');
    }
    this.connection = options.connection ?? new SqliteConnection(options);
    this.clock = options.clock ?? systemClock;
    this.lexical = new LexicalSearch(this.connection, options.search);
  }

  /** Apply the migrations (idempotent). Nothing touches the database before this is called once. */
  setup(): Promise<SetupReport> {
    return this.connection.setup();
  }

  /** Close the database connection, when this store opened it (also for every store sharing it). */
  close(): void {
    this.connection.close();
  }

  protected get orm() {
    return this.connection.orm;
  }

  /** A write transaction, after checking the schema is set up. */
  protected write<R>(fn: () => R): R {
    this.connection.assertReady();
    return this.connection.write(fn);
  }

  /** One write statement without a transaction around it (atomic by itself), after the same check. */
  protected writeOne<R>(fn: () => R): R {
    this.connection.assertReady();
    return this.connection.statement(fn);
  }

  /** A read transaction, after checking the schema is set up. */
  protected read<R>(fn: () => R): R {
    this.connection.assertReady();
    return this.connection.read(fn);
  }

  /** One read statement (no transaction needed: a single statement sees one state), after the same check. */
  protected readOne<R>(fn: () => R): R {
    this.connection.assertReady();
    return this.connection.statement(fn);
  }

  /**
   * `eraseUser` of every kind: `erase` runs in one write transaction (after the user id is checked) and
   * returns the ids it deleted; then nothing of them is left in the file's bytes (`eraseAndScrub`).
   */
  protected eraseAll(userId: string, erase: () => string[]): string[] {
    parseOrThrow(SnapshotSelectorSchema, { userId }, 'user id');
    this.connection.assertReady();
    return this.connection.eraseAndScrub(erase);
  }

  protected snapshotOf<R>(
    kind: StoreKind,
    selector: SnapshotSelector,
    load: (userId: string | undefined) => R[],
  ): SnapshotEnvelope<R> {
    const parsed = parseOrThrow(SnapshotSelectorSchema, selector, 'snapshot selector');
    const userId = 'userId' in parsed ? parsed.userId : undefined;
    const records = this.read(() => load(userId));
    return makeEnvelope(kind, parsed, records, this.clock);
  }

  /**
   * Validate a snapshot completely (envelope, every record, the user restriction, duplicate ids per
   * partition), then replace every partition it contains in one transaction.
   */
  protected restoreFrom<R>(
    kind: StoreKind,
    recordSchema: RecordSchema<R>,
    input: unknown,
    options: RestoreOptions,
    spec: RestoreSpec<R> & {
      /** Delete one partition (given one of its records) and insert its records. */
      replace(records: R[]): void;
    },
  ): RestoreReport {
    const plan = planRestore(kind, recordSchema, input, options, spec);
    this.write(() => {
      for (const records of plan.partitions) spec.replace(records);
    });
    return { records: plan.records, partitions: plan.partitions.length };
  }
}
