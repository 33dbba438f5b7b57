import type { Fact } from '@kioku/core';
import type { ParsedFactFilter, ParsedFactQuery } from '@kioku/core/adapter';
import type { FactHit } from '@kioku/core/store';
import type Database from 'better-sqlite3';
import { and, type SQL, sql } from 'drizzle-orm';
import { integer, SQLiteSyncDialect, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { analyze, factText } from './analysis.js';
import { categoryUnder, hasAllTags } from './filters.js';
import { LexicalSearch, scopeToken } from './search.js';

/**
 * The search side of the record backend's facts: one row per fact record (same `seq` as its row in
 * `kioku_records`) with what a search filters and orders on and core's analysis of its text, under an
 * FTS5 index kept by triggers, and row and term counts per partition. Fact search and count are answered
 * here by store-sqlite's own `LexicalSearch` (native's statements and core's ranking), so the record
 * backend searches as the native fact store does, without decoding the partition.
 */
export const recordFacts = sqliteTable('kioku_record_facts', {
  seq: integer('seq').primaryKey(),
  label: text('label').notNull(),
  category: text('category').notNull(),
  tags: text('tags').notNull(),
  updatedAt: text('updated_at').notNull(),
  searchTerms: text('search_terms').notNull(),
  searchLength: integer('search_length').notNull(),
  searchScope: text('search_scope'),
});

const STATS = 'kioku_record_search_stats';

export const RECORD_FACTS_SCHEMA = `
CREATE TABLE IF NOT EXISTS kioku_record_facts (
  seq INTEGER PRIMARY KEY,
  label TEXT NOT NULL,
  category TEXT NOT NULL,
  tags TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  search_terms TEXT NOT NULL,
  search_length INTEGER NOT NULL,
  search_scope TEXT GENERATED ALWAYS AS ('p' || hex(label)) VIRTUAL
);
CREATE INDEX IF NOT EXISTS kioku_record_facts_updated ON kioku_record_facts (label, updated_at DESC, seq);
CREATE TABLE IF NOT EXISTS ${STATS} (
  table_name TEXT NOT NULL,
  scope TEXT NOT NULL,
  rows INTEGER NOT NULL,
  terms INTEGER NOT NULL,
  changes INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (table_name, scope)
);
CREATE VIRTUAL TABLE IF NOT EXISTS kioku_record_facts_fts USING fts5(search_scope, search_terms, content='kioku_record_facts', content_rowid='seq', tokenize='unicode61 remove_diacritics 0');
INSERT INTO kioku_record_facts_fts(kioku_record_facts_fts, rank) VALUES ('rank', 'bm25(0.0, 1.0)');
CREATE VIRTUAL TABLE IF NOT EXISTS kioku_record_facts_fts_vocab USING fts5vocab('kioku_record_facts_fts', 'col');
CREATE TRIGGER IF NOT EXISTS kioku_record_facts_fts_insert AFTER INSERT ON kioku_record_facts BEGIN
  INSERT INTO kioku_record_facts_fts(rowid, search_scope, search_terms) VALUES (new.seq, new.search_scope, new.search_terms);
  INSERT INTO ${STATS}(table_name, scope, rows, terms, changes)
    VALUES ('kioku_record_facts', new.search_scope, 1, new.search_length, 1), ('kioku_record_facts', '', 1, new.search_length, 1)
    ON CONFLICT(table_name, scope) DO UPDATE SET rows = rows + 1, terms = terms + excluded.terms, changes = changes + 1;
END;
CREATE TRIGGER IF NOT EXISTS kioku_record_facts_fts_delete AFTER DELETE ON kioku_record_facts BEGIN
  INSERT INTO kioku_record_facts_fts(kioku_record_facts_fts, rowid, search_scope, search_terms) VALUES ('delete', old.seq, old.search_scope, old.search_terms);
  UPDATE ${STATS} SET rows = rows - 1, terms = terms - old.search_length, changes = changes + 1
    WHERE table_name = 'kioku_record_facts' AND scope IN (old.search_scope, '');
END;
CREATE TRIGGER IF NOT EXISTS kioku_record_facts_fts_update AFTER UPDATE OF search_terms, search_length, label ON kioku_record_facts BEGIN
  INSERT INTO kioku_record_facts_fts(kioku_record_facts_fts, rowid, search_scope, search_terms) VALUES ('delete', old.seq, old.search_scope, old.search_terms);
  UPDATE ${STATS} SET rows = rows - 1, terms = terms - old.search_length, changes = changes + 1
    WHERE table_name = 'kioku_record_facts' AND scope IN (old.search_scope, '');
  INSERT INTO kioku_record_facts_fts(rowid, search_scope, search_terms) VALUES (new.seq, new.search_scope, new.search_terms);
  INSERT INTO ${STATS}(table_name, scope, rows, terms, changes)
    VALUES ('kioku_record_facts', new.search_scope, 1, new.search_length, 1), ('kioku_record_facts', '', 1, new.search_length, 1)
    ON CONFLICT(table_name, scope) DO UPDATE SET rows = rows + 1, terms = terms + excluded.terms, changes = changes + 1;
END;
CREATE TRIGGER IF NOT EXISTS kioku_records_fact_delete AFTER DELETE ON kioku_records BEGIN
  DELETE FROM kioku_record_facts WHERE seq = old.seq;
END;
`;

/** The columns of a fact's search row, in the order of the statements below. */
function searchColumns(fact: Fact) {
  const search = analyze(factText(fact));
  return [fact.category, JSON.stringify(fact.tags), fact.updatedAt, search.terms, search.length] as const;
}

const dialect = new SQLiteSyncDialect();

/** Keeps the fact records' search rows and answers fact search and count from them. */
export class RecordFactIndex {
  readonly #db: Database.Database;
  readonly #lexical: LexicalSearch;
  readonly #statements = new Map<string, Database.Statement>();
  readonly #insert: Database.Statement;
  readonly #update: Database.Statement;

  constructor(db: Database.Database) {
    this.#db = db;
    this.#lexical = new LexicalSearch({ raw: db }, {}, STATS);
    this.#insert = db.prepare(
      `INSERT INTO kioku_record_facts (seq, label, category, tags, updated_at, search_terms, search_length)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    this.#update = db.prepare(
      `UPDATE kioku_record_facts SET category = ?, tags = ?, updated_at = ?, search_terms = ?, search_length = ?
       WHERE seq = ?`,
    );
  }

  /** The search row of a fact record just inserted as `seq` (inside the write's transaction). */
  inserted(seq: number | bigint, label: string, fact: Fact): void {
    this.#insert.run(seq, label, ...searchColumns(fact));
  }

  /** The search row of a fact record changed in place. */
  updated(seq: number | bigint, fact: Fact): void {
    this.#update.run(...searchColumns(fact), seq);
  }

  /** After the partition `label` was emptied: its counts go and the FTS5 index is merged without its terms. */
  emptied(label: string): void {
    this.#db.transaction(() => {
      this.#prepare(
        `DELETE FROM ${STATS} WHERE table_name = 'kioku_record_facts' AND scope = ? AND rows = 0`,
      ).run(scopeToken(label));
      this.#db.exec("INSERT INTO kioku_record_facts_fts(kioku_record_facts_fts) VALUES ('optimize')");
    })();
  }

  /** Every fact record's search row again (the analyzer changed, or the rows predate this table). */
  rebuild(): void {
    this.#db.exec('DELETE FROM kioku_record_facts');
    const facts = this.#db
      .prepare(
        `SELECT r.seq, r.label, r.json FROM kioku_records r JOIN kioku_record_partitions p ON p.label = r.label
         WHERE p.kind = 'facts' AND r.key <> ''`,
      )
      .raw()
      .all() as Array<[number, string, string]>;
    for (const [seq, label, json] of facts) this.inserted(seq, label, JSON.parse(json) as Fact);
  }

  /** A fact search in the partition `label`, ranked as core ranks (see `LexicalSearch`). */
  search(label: string, query: ParsedFactQuery): FactHit[] {
    return this.#db.transaction(() => {
      const where = filters(query);
      const text = query.query;
      if (text === undefined || !text.trim()) {
        // Core's order: newest updated first, ties in the partition's order.
        return this.#all<{ json: string }>(
          sql`SELECT r.json AS json FROM kioku_record_facts JOIN kioku_records r ON r.seq = kioku_record_facts.seq
              WHERE kioku_record_facts.label = ${label}${where ? sql` AND ${where}` : sql``}
              ORDER BY kioku_record_facts.updated_at DESC, kioku_record_facts.seq LIMIT ${query.limit}`,
        ).map((row) => ({ fact: JSON.parse(row.json) as Fact, score: 0 }));
      }
      const target = { table: recordFacts, scope: scopeToken(label), where };
      const ranked = this.#lexical.search(target, text, query.limit);
      if (ranked.length === 0) return [];
      const rows = this.#prepare(
        'SELECT seq, json FROM kioku_records WHERE seq IN (SELECT value FROM json_each(?)) AND label = ?',
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
      sql`SELECT count(*) AS n FROM kioku_record_facts WHERE label = ${label}${where ? sql` AND ${where}` : sql``}`,
    );
    return Number(row?.n ?? 0);
  }

  #all<T>(query: SQL): T[] {
    const { sql: text, params } = dialect.sqlToQuery(query);
    return this.#prepare(text).all(...params) as T[];
  }

  #prepare(source: string): Database.Statement {
    let statement = this.#statements.get(source);
    if (!statement) {
      statement = this.#db.prepare(source);
      this.#statements.set(source, statement);
    }
    return statement;
  }
}

/** Category and tags, on the search row's columns (the native store's own filters). */
function filters(filter: { category?: string | undefined; tags?: string[] | undefined }): SQL | undefined {
  return and(
    filter.category === undefined ? undefined : categoryUnder(recordFacts.category, filter.category),
    hasAllTags(recordFacts.tags, filter.tags),
  );
}
