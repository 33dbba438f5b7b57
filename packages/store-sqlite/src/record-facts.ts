import type { Fact } from '@kioku/core';
import { factSearchText, type ParsedFactFilter, type ParsedFactQuery } from '@kioku/core/adapter';
import type { FactHit } from '@kioku/core/store';
import type Database from 'better-sqlite3';
import { and, type SQL, sql } from 'drizzle-orm';
import { integer, SQLiteSyncDialect, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { analyze } from './analysis.js';
import { categoryUnder, hasAllTags } from './filters.js';
import { LexicalSearch, type SearchSettings, scopeToken } from './search.js';
import { preparedOnce } from './statement-cache.js';

/**
 * The search columns of the record backend's facts: on the fact's own row of `kioku_records` (one row per
 * fact, its text stored once). What a search filters and orders on and core's analysis of the fact's
 * text, under an FTS5 index over the table (external content, kept by triggers that skip rows without
 * search terms) and row and term counts per partition. Details and document chunks have search terms too
 * (`record-search.ts`), in their own partitions; every other record's columns are NULL. Fact search and
 * count are answered here by store-sqlite's own `LexicalSearch` (FTS5 candidates, core's ranking), without
 * decoding the partition.
 */
export const recordFacts = sqliteTable('kioku_records', {
  seq: integer('seq').primaryKey(),
  label: text('label').notNull(),
  json: text('json').notNull(),
  category: text('category'),
  tags: text('tags'),
  updatedAt: text('updated_at'),
  searchTerms: text('search_terms'),
  searchLength: integer('search_length'),
  searchScope: text('search_scope'),
});

const STATS = 'kioku_record_search_stats';

/** The columns `kioku_records` has beside its record. */
export const RECORD_SEARCH_COLUMNS = [
  'category TEXT',
  'tags TEXT',
  'updated_at TEXT',
  'search_terms TEXT',
  'search_length INTEGER',
  "search_scope TEXT GENERATED ALWAYS AS ('p' || hex(label)) VIRTUAL",
] as const;

/**
 * A row is searchable when it has search terms (facts, details, document chunks; a fact statement's
 * partition label keeps it to facts); the statements below say so to use the partial index.
 */
const FACT_ROW = 'search_terms IS NOT NULL';

const STATS_TABLE = `
CREATE TABLE IF NOT EXISTS ${STATS} (
  table_name TEXT NOT NULL,
  scope TEXT NOT NULL,
  rows INTEGER NOT NULL,
  terms INTEGER NOT NULL,
  changes INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (table_name, scope)
);
`;

export const RECORD_FACTS_SCHEMA = `${STATS_TABLE}
CREATE INDEX IF NOT EXISTS kioku_records_updated ON kioku_records (label, updated_at DESC, seq) WHERE ${FACT_ROW};
CREATE VIRTUAL TABLE IF NOT EXISTS kioku_records_fts USING fts5(search_scope, search_terms, content='kioku_records', content_rowid='seq', tokenize='unicode61 remove_diacritics 0');
INSERT INTO kioku_records_fts(kioku_records_fts, rank) VALUES ('rank', 'bm25(0.0, 1.0)');
CREATE VIRTUAL TABLE IF NOT EXISTS kioku_records_fts_vocab USING fts5vocab('kioku_records_fts', 'col');
CREATE TRIGGER IF NOT EXISTS kioku_records_fts_insert AFTER INSERT ON kioku_records WHEN new.${FACT_ROW} BEGIN
  INSERT INTO kioku_records_fts(rowid, search_scope, search_terms) VALUES (new.seq, new.search_scope, new.search_terms);
  INSERT INTO ${STATS}(table_name, scope, rows, terms, changes)
    VALUES ('kioku_records', new.search_scope, 1, new.search_length, 1), ('kioku_records', '', 1, new.search_length, 1)
    ON CONFLICT(table_name, scope) DO UPDATE SET rows = rows + 1, terms = terms + excluded.terms, changes = changes + 1;
END;
CREATE TRIGGER IF NOT EXISTS kioku_records_fts_delete AFTER DELETE ON kioku_records WHEN old.${FACT_ROW} BEGIN
  INSERT INTO kioku_records_fts(kioku_records_fts, rowid, search_scope, search_terms) VALUES ('delete', old.seq, old.search_scope, old.search_terms);
  UPDATE ${STATS} SET rows = rows - 1, terms = terms - old.search_length, changes = changes + 1
    WHERE table_name = 'kioku_records' AND scope IN (old.search_scope, '');
END;
CREATE TRIGGER IF NOT EXISTS kioku_records_fts_update AFTER UPDATE OF search_terms, search_length, label ON kioku_records
  WHEN old.${FACT_ROW} OR new.${FACT_ROW} BEGIN
  INSERT INTO kioku_records_fts(kioku_records_fts, rowid, search_scope, search_terms)
    SELECT 'delete', old.seq, old.search_scope, old.search_terms WHERE old.${FACT_ROW};
  UPDATE ${STATS} SET rows = rows - 1, terms = terms - old.search_length, changes = changes + 1
    WHERE old.${FACT_ROW} AND table_name = 'kioku_records' AND scope IN (old.search_scope, '');
  INSERT INTO kioku_records_fts(rowid, search_scope, search_terms)
    SELECT new.seq, new.search_scope, new.search_terms WHERE new.${FACT_ROW};
  INSERT INTO ${STATS}(table_name, scope, rows, terms, changes)
    SELECT 'kioku_records', s.scope, 1, new.search_length, 1 FROM (SELECT new.search_scope AS scope UNION ALL SELECT '') s
    WHERE new.${FACT_ROW}
    ON CONFLICT(table_name, scope) DO UPDATE SET rows = rows + 1, terms = terms + excluded.terms, changes = changes + 1;
END;
`;

/** The FTS5 index, its triggers and counts, dropped so `fillSearchColumns` fills them from the rows afresh. */
const SEARCH_INDEX = `${STATS_TABLE}
DROP TRIGGER IF EXISTS kioku_records_fts_insert;
DROP TRIGGER IF EXISTS kioku_records_fts_delete;
DROP TRIGGER IF EXISTS kioku_records_fts_update;
DROP TABLE IF EXISTS kioku_records_fts_vocab;
DROP TABLE IF EXISTS kioku_records_fts;
DELETE FROM ${STATS} WHERE table_name = 'kioku_records';
`;

/** A fact record's search columns, in the order of `SEARCH_COLUMN_NAMES`; NULLs for any other record. */
export type SearchColumns = readonly [
  string | null,
  string | null,
  string | null,
  string | null,
  number | null,
];
export const NO_SEARCH: SearchColumns = [null, null, null, null, null];
export const SEARCH_COLUMN_NAMES = 'category, tags, updated_at, search_terms, search_length';

export function searchColumns(fact: Fact): SearchColumns {
  const search = analyze(factSearchText(fact));
  return [fact.category, JSON.stringify(fact.tags), fact.updatedAt, search.terms, search.length];
}

const dialect = new SQLiteSyncDialect();

/** Answers fact search and count from the fact rows' search columns, and keeps their index. */
export class RecordFactIndex {
  readonly #db: Database.Database;
  readonly #lexical: LexicalSearch;
  readonly #prepare: (source: string) => Database.Statement;

  constructor(db: Database.Database, lexical: LexicalSearch) {
    this.#db = db;
    this.#lexical = lexical;
    this.#prepare = preparedOnce(db);
  }

  /** A `LexicalSearch` over the records table's index and counts (facts, details, document chunks). */
  static lexical(db: Database.Database, settings: Partial<SearchSettings> = {}): LexicalSearch {
    return new LexicalSearch({ raw: db }, settings, STATS);
  }

  /** After the partition `label` was emptied: its counts go and the FTS5 index is merged without its terms. */
  emptied(label: string): void {
    this.#db.transaction(() => {
      this.#prepare(`DELETE FROM ${STATS} WHERE table_name = 'kioku_records' AND scope = ? AND rows = 0`).run(
        scopeToken(label),
      );
      this.#db.exec("INSERT INTO kioku_records_fts(kioku_records_fts) VALUES ('optimize')");
    })();
  }

  /**
   * Empties every record's search columns and makes the index anew (inside setup's transaction), for
   * `fillSearchColumns` (record-search.ts) to fill them: the analyzer changed, or the rows predate them.
   */
  static clear(db: Database.Database): void {
    db.exec(SEARCH_INDEX);
    db.exec(`UPDATE kioku_records SET category = NULL, tags = NULL, updated_at = NULL, search_terms = NULL,
      search_length = NULL WHERE ${FACT_ROW} OR tags IS NOT NULL`);
    db.exec(RECORD_FACTS_SCHEMA);
  }

  /** A fact search in the partition `label`, ranked as core ranks (see `LexicalSearch`). */
  search(label: string, query: ParsedFactQuery): FactHit[] {
    return this.#db.transaction(() => {
      const where = filters(query);
      const text = query.query;
      if (text === undefined || !text.trim()) {
        // Core's order: newest updated first, ties in the partition's order.
        return this.#all<{ json: string }>(
          sql`SELECT json FROM kioku_records
              WHERE label = ${label} AND ${sql.raw(FACT_ROW)}${where ? sql` AND ${where}` : sql``}
              ORDER BY updated_at DESC, seq LIMIT ${query.limit}`,
        ).map((row) => ({ fact: JSON.parse(row.json) as Fact, score: 0 }));
      }
      const target = { table: recordFacts, scope: scopeToken(label), where };
      const ranked = this.#lexical.search(target, text, query.limit);
      if (ranked.length === 0) return [];
      // By rowid: `+label` keeps SQLite from walking the partition's rows through the key index instead.
      const rows = this.#prepare(
        'SELECT seq, json FROM kioku_records WHERE seq IN (SELECT value FROM json_each(?)) AND +label = ?',
      ).all(JSON.stringify(ranked.map((r) => r.seq)), label) as Array<{ seq: number; json: string }>;
      const bySeq = new Map(rows.map((row) => [row.seq, row.json]));
      return ranked.flatMap((r) => {
        const json = bySeq.get(r.seq);
        return json === undefined ? [] : [{ fact: JSON.parse(json) as Fact, score: r.score }];
      });
    })();
  }

  /** How many facts of the partition `label` match the filter. */
  count(label: string, filter: ParsedFactFilter): number {
    const where = filters(filter);
    const [row] = this.#all<{ n: number }>(
      sql`SELECT count(*) AS n FROM kioku_records
          WHERE label = ${label} AND ${sql.raw(FACT_ROW)}${where ? sql` AND ${where}` : sql``}`,
    );
    return Number(row?.n ?? 0);
  }

  #all<T>(query: SQL): T[] {
    const { sql: text, params } = dialect.sqlToQuery(query);
    return this.#prepare(text).all(...params) as T[];
  }
}

/** Category and tags, on the fact row's search columns. */
function filters(filter: { category?: string | undefined; tags?: string[] | undefined }): SQL | undefined {
  return and(
    filter.category === undefined ? undefined : categoryUnder(recordFacts.category, filter.category),
    hasAllTags(recordFacts.tags, filter.tags),
  );
}
