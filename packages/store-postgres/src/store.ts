import type { Clock } from '@kioku/core';
import { systemClock } from '@kioku/core/adapter';
import type { AnyColumn } from 'drizzle-orm';
import { type PostgresConnectionOptions, PostgresDatabase } from './database.js';
import { type LexicalMatch, lexicalMatch, matchTerms, queryLexemes } from './search.js';

export interface PostgresStoreOptions extends PostgresConnectionOptions {
  /** A database shared with other stores (what `createPostgresStores` passes); then `close()` leaves it open. */
  database?: PostgresDatabase;
  /** Time source for timestamps and TTLs (default: the system clock). The database's `now()` is never used. */
  clock?: Clock;
}

/** What every Postgres store has: its database (connection + schema), its clock, `setup()` and `close()`. */
export abstract class PostgresStore {
  protected readonly database: PostgresDatabase;
  protected readonly clock: Clock;
  readonly #ownsDatabase: boolean;

  constructor(options: PostgresStoreOptions) {
    this.#ownsDatabase = options.database === undefined;
    this.database = options.database ?? new PostgresDatabase(options);
    this.clock = options.clock ?? systemClock;
  }

  /** The schema the tables live in. */
  get schema(): string {
    return this.database.schema;
  }

  /** Create the schema and apply pending migrations. Idempotent; see {@link PostgresDatabase.setup}. */
  setup(): Promise<void> {
    return this.database.setup();
  }

  /** Close the connection this store opened (a shared database or a client passed in stays open). */
  async close(): Promise<void> {
    if (this.#ownsDatabase) await this.database.close();
  }

  /** @internal */
  protected get tables() {
    return this.database.tables;
  }

  /** The distinct lexemes of `query`, analysed as the indexed text is (one prepared query). */
  protected lexemes(query: string): Promise<string[]> {
    return this.database.run(() => queryLexemes(this.database.client, query));
  }

  /** @internal The full-text match of `query` on `search`; undefined when the query has no terms (it matches nothing). */
  protected async match(search: AnyColumn, query: string): Promise<LexicalMatch | undefined> {
    const lexemes = await this.lexemes(query);
    return lexemes.length > 0 ? lexicalMatch(search, matchTerms(lexemes)) : undefined;
  }
}
