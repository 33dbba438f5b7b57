import {
  expandQuery,
  type RankCandidate,
  scoreCandidates,
  termCounts,
  termsByRarity,
} from '@kioku/core/adapter';
import type Database from 'better-sqlite3';
import { getTableName, type SQL, sql } from 'drizzle-orm';
import { SQLiteSyncDialect, type SQLiteTable } from 'drizzle-orm/sqlite-core';
import { queryTerms } from './analysis.js';

import { DEFAULT_SEARCH, type SearchSettings } from './search-settings.js';

export { DEFAULT_SEARCH, type Ranking, type SearchSettings } from './search-settings.js';

/** One searchable table: its name and its FTS5 index (`<table>_fts`, with `<table>_fts_vocab`). */
export interface SearchTarget {
  table: SQLiteTable;
  /** The partition: the same token the table's `search_scope` column computes. */
  scope: string;
  /** Set when the partition holds every row of the table: FTS5 then needs no partition constraint. */
  whole?: boolean;
  /**
   * Set when the partition holds at least half of the table's rows: FTS5 then matches on the terms alone
   * and the partition is kept by a join (see `#ranked` and `#rows`).
   */
  dominant?: boolean;
  /** Filters on the table's rows beyond the partition, which the FTS5 query already applies. */
  where?: SQL | undefined;
}

export interface RankedRow {
  seq: number;
  score: number;
}

/** `p` + hex of the partition's ids joined by `/`: equal to the `search_scope` column's expression. */
export function scopeToken(...ids: string[]): string {
  return `p${Buffer.from(ids.join('/'), 'utf8').toString('hex').toUpperCase()}`;
}

/**
 * An FTS5 string literal. Every term is quoted (embedded quotes doubled), so nothing the user typed —
 * `"`, `*`, `:`, `^`, `NEAR`, `OR`, parentheses — is ever read as query syntax.
 */
export function quoteFts(term: string): string {
  return `"${term.replaceAll('"', '""')}"`;
}

/** The MATCH expression: any of the terms, in the partition named by `scope` (all rows when undefined). */
export function ftsExpression(scope: string | undefined, terms: Iterable<string>): string {
  const any = `search_terms : (${[...terms].map(quoteFts).join(' OR ')})`;
  return scope === undefined ? any : `search_scope : ${quoteFts(scope)} AND ${any}`;
}

/** The MATCH expression for rows holding a word of every group, in the partition named by `scope`. */
export function ftsConjunction(scope: string | undefined, groups: readonly (readonly string[])[]): string {
  const all = `search_terms : (${groups.map((g) => `(${g.map(quoteFts).join(' OR ')})`).join(' AND ')})`;
  return scope === undefined ? all : `search_scope : ${quoteFts(scope)} AND ${all}`;
}

interface Candidate {
  seq: number;
  terms: string;
  length: number;
  rank: number;
}

/** A candidate row, its terms counted once per search. */
type Pooled = RankCandidate;

function add(pool: Map<number, Pooled>, candidates: readonly Candidate[]): void {
  for (const c of candidates) {
    if (!pool.has(c.seq)) pool.set(c.seq, { seq: c.seq, tf: termCounts(c.terms), length: c.length });
  }
}

/** Runs lexical searches over one connection; statements are prepared once per SQL text. */
export class LexicalSearch {
  /** Opened lazily: nothing is read before the first search. */
  readonly #connection: { readonly raw: Database.Database };
  readonly #settings: SearchSettings;
  /** Where the searched tables' row and term counts are (see `kioku_record_search_stats`). */
  readonly #statsTable: string;
  readonly #statements = new Map<string, Database.Statement>();
  /** Document frequencies per table and partition, kept in step with inserts (see `#documentFrequencies`). */
  readonly #dfCache = new Map<string, DfCache>();

  constructor(
    connection: { readonly raw: Database.Database },
    settings: Partial<SearchSettings>,
    statsTable: string,
  ) {
    this.#connection = connection;
    this.#settings = { ...DEFAULT_SEARCH, ...settings };
    this.#statsTable = statsTable;
  }

  /** Best matches first; an empty list when the query has no searchable term (only stop words, say). */
  search(request: SearchTarget, query: string, limit: number): RankedRow[] {
    const weights = queryTerms(query);
    if (weights.size === 0) return [];
    if (this.#settings.ranking === 'bm25') {
      return this.#ranked(request, weights.keys(), limit).map((c) => ({ seq: c.seq, score: -c.rank }));
    }
    const stats = this.#stats(request.table, request.scope);
    if (stats.rows === 0) return [];
    const table = this.#stats(request.table, TABLE_TOTALS);
    const target = { ...request, whole: table.rows === stats.rows, dominant: stats.rows * 2 >= table.rows };
    const original = new Set(weights.keys());
    const counts = this.#counts(target, stats);
    const df = this.#documentFrequencies(target, counts, table.rows === stats.rows);
    // A small partition's rows are in memory: its candidates are every row holding a query word, found
    // there (core's exact ranking); with filters (category, tags), SQL finds them.
    const memory = counts.rows && !target.where ? counts : undefined;
    const depth = Math.max(this.#settings.candidates, limit * 4);
    // Every row gathered for the query is scored; the feedback round adds its own rows to the same pool,
    // so the first round's best rows are scored again with the expanded query (core scores every row).
    const pool = new Map<number, Pooled>();
    this.#gather(target, weights, original, depth, df, pool, stats.rows, memory);
    let ranked = scoreCandidates(pool.values(), weights, original, stats, df);
    const expanded = expandQuery(ranked, weights, stats.rows, df);
    if (expanded) {
      this.#gather(target, expanded, original, depth, df, pool, stats.rows, memory);
      ranked = scoreCandidates(pool.values(), expanded, original, stats, df);
    }
    return ranked.slice(0, limit).map(({ seq, score }) => ({ seq, score }));
  }

  /**
   * Adds the query's candidate rows to `pool`; every pooled row is then scored exactly. FTS5's bm25() costs
   * about a microsecond per matching row plus a walk through every phrase's postings, so a word found in
   * much of a large partition ("user" in a million facts) must not be ranked by it. So:
   * - when the query's words occur in at most EXACT_BUDGET rows (summed document frequencies), all of those
   *   rows: core's ranking exactly (almost every LoCoMo question);
   * - otherwise, words taken rarest first: the rare words, while their postings add up to at most
   *   MATCH_BUDGET, ranked by bm25() (its best `depth` rows);
   * - the newest `depth` rows holding every query word that tells rows apart (in at most a tenth of the
   *   partition: a word in every other row barely moves a score, and intersecting with it is slow), and the
   *   newest `depth` holding a rare word (or, when no word is rare, the rarest word) and another: covering
   *   more of the query multiplies the score, and FTS5 finds such rows by intersecting postings, without
   *   ranking them;
   * - when that gives fewer than `depth` rows, the newest rows holding a common word.
   * In the feedback round (`original` holds the query's own words), only the feedback words are looked up:
   * all their rows when few, else the rare ones' bm25() best (within FEEDBACK_BUDGET postings) and the
   * newest rows holding one with an original word. Rows of original words alone are in the pool already.
   */
  #gather(
    target: SearchTarget,
    weights: ReadonlyMap<string, number>,
    original: ReadonlySet<string>,
    depth: number,
    df: (term: string) => number,
    pool: Map<number, Pooled>,
    rows: number,
    memory?: DfCache,
  ): void {
    const terms = termsByRarity(weights, original, df, { match: MATCH_BUDGET, feedback: FEEDBACK_BUDGET });
    if (!terms) return;
    const { feedback, present, postings, rare, common, anchor } = terms;
    if (memory) {
      addKept(pool, memory, present);
      return;
    }
    if (postings <= EXACT_BUDGET) {
      add(pool, this.#matching(target, present));
      return;
    }
    if (rare.length > 0) add(pool, this.#ranked(target, rare, depth));
    if (feedback) {
      const originals = [...original].filter((term) => df(term) > 0);
      if (originals.length > 0) add(pool, this.#newest(target, [anchor, originals], depth));
      return;
    }
    if (common.length === 0) return;
    const before = pool.size;
    const telling = present.filter((term) => df(term) * 10 <= rows);
    if (present.length >= 3 && telling.length >= 2) {
      add(
        pool,
        this.#newest(
          target,
          telling.map((term) => [term]),
          depth,
        ),
      );
    }
    const others = rare.length > 0 ? common : common.slice(1);
    if (others.length > 0) add(pool, this.#newest(target, [anchor, others], depth));
    if (pool.size - before < depth) add(pool, this.#newest(target, [common], depth));
  }

  /** Every row of the partition holding any of `terms`, with its analyzed text. */
  #matching(target: SearchTarget, terms: readonly string[]): Candidate[] {
    return this.#rows(target, (scope) => ftsExpression(scope, terms), undefined);
  }

  /** The newest rows of the partition holding a word of every group (no ranking: FTS5 walks rowids backwards). */
  #newest(target: SearchTarget, groups: readonly (readonly string[])[], limit: number): Candidate[] {
    return this.#rows(target, (scope) => ftsConjunction(scope, groups), limit);
  }

  /**
   * Rows of the partition matching an expression, with their analyzed text; newest first when limited.
   * The partition is a phrase of the MATCH, or (holding at least half of the table, see `#ranked`) a join
   * condition: FTS5 would otherwise intersect every match with the partition's own long postings list.
   */
  #rows(target: SearchTarget, expression: (scope: string | undefined) => string, limit: number | undefined) {
    const t = target.table;
    const fts = sql.identifier(`${tableName(t)}_fts`);
    const joined = !target.whole && target.dominant === true;
    const match = expression(target.whole || joined ? undefined : target.scope);
    const conditions = [
      joined ? sql`${t}.search_scope = ${target.scope}` : undefined,
      target.where ? sql`(${target.where})` : undefined,
    ].filter((c) => c !== undefined);
    const filter = conditions.length > 0 ? sql` AND ${sql.join(conditions, sql` AND `)}` : sql``;
    const newest = limit === undefined ? sql`` : sql` ORDER BY ${fts}.rowid DESC LIMIT ${limit}`;
    return this.#all(
      sql`SELECT ${t}.seq AS seq, 0 AS rank, ${t}.search_terms AS terms, ${t}.search_length AS length
          FROM ${fts} JOIN ${t} ON ${t}.seq = ${fts}.rowid
          WHERE ${fts} MATCH ${match}${filter}${newest}`,
    );
  }

  /**
   * The best `limit` rows of the partition by FTS5's bm25(), filtered by the target's conditions. Only
   * rowids and ranks go through the sort (FTS5 keeps the top `limit` itself when there is no filter);
   * the analyzed text is read for the winners only.
   *
   * The partition is normally a phrase of the MATCH (`search_scope : …`), which keeps FTS5 inside it. But
   * bm25() then works through that phrase in every matching row too (weight 0, yet not free): with one user
   * holding 1M of a table's rows, ranking took ~90 ms instead of ~25 ms. When the partition holds at least
   * half of the table, the MATCH has the terms alone and a join keeps the partition's rows: the same rows
   * with the same scores (the scope phrase adds 0 to bm25), and at most twice the rows to rank.
   */
  #ranked(target: SearchTarget, terms: Iterable<string>, limit: number): Candidate[] {
    const t = target.table;
    const fts = sql.identifier(`${tableName(t)}_fts`);
    const joined = !target.whole && target.dominant === true;
    const match = ftsExpression(target.whole || joined ? undefined : target.scope, terms);
    const where = joined
      ? target.where
        ? sql`${t}.search_scope = ${target.scope} AND (${target.where})`
        : sql`${t}.search_scope = ${target.scope}`
      : target.where;
    const top = where
      ? sql`SELECT ${fts}.rowid AS seq, ${fts}.rank AS rank FROM ${fts} JOIN ${t} ON ${t}.seq = ${fts}.rowid
            WHERE ${fts} MATCH ${match} AND (${where}) ORDER BY ${fts}.rank LIMIT ${limit}`
      : sql`SELECT rowid AS seq, rank FROM ${fts} WHERE ${fts} MATCH ${match} ORDER BY rank LIMIT ${limit}`;
    return this.#all(
      sql`SELECT m.seq AS seq, m.rank AS rank, ${t}.search_terms AS terms, ${t}.search_length AS length
          FROM (${top}) m JOIN ${t} ON ${t}.seq = m.seq ORDER BY m.rank`,
    );
  }

  #stats(table: SQLiteTable, scope: string): Stats {
    const row = this.#prepare(
      `SELECT rows, terms, changes FROM "${this.#statsTable}" WHERE table_name = ? AND scope = ?`,
    ).get(tableName(table), scope) as Stats | undefined;
    return row ?? { rows: 0, terms: 0, changes: 0 };
  }

  /**
   * What a search knows of the partition's terms, kept per partition and exact across writes, whoever makes
   * them: the partition's `changes` counter tells how many row changes happened since. When every one of
   * them is a row inserted since (above the highest `seq` then), those rows are added; after anything else
   * (an update, a delete, too many rows) it starts afresh.
   *
   * A partition of at most SCAN_TERMS terms is read whole, in one pass (its FTS5 postings, then its analyzed
   * texts), and kept in memory: every term's rows, so its document frequencies and candidates need no query.
   * A larger one is counted term by term as searches need them (FTS5's vocabulary when the partition is the
   * whole table, else a `count(*)` of the partition's matches). Each such count walks the term's postings
   * in the whole table, and the feedback round over paragraph-long texts needs ~160 of them (~20 ms), while
   * 200 such paragraphs are read whole in about a millisecond. (fts5vocab cannot count one partition: it
   * counts the table.)
   */
  #counts(target: SearchTarget, stats: Stats): DfCache {
    const name = tableName(target.table);
    const key = `${name}/${target.scope}`;
    let cache = this.#dfCache.get(key);
    if (cache && !this.#catchUp(cache, target, stats)) cache = undefined;
    if (!cache || cache.df.size > MAX_CACHED_TERMS) cache = this.#fresh(target, stats);
    // Most recently used last: the partitions searched longest ago are dropped first.
    this.#dfCache.delete(key);
    this.#dfCache.set(key, cache);
    let kept = 0;
    for (const entry of this.#dfCache.values()) kept += entry.rows ? entry.terms : 0;
    for (const [oldest, entry] of this.#dfCache) {
      if (this.#dfCache.size <= MAX_CACHED_PARTITIONS && kept <= MAX_KEPT_TERMS) break;
      if (entry === cache) break;
      this.#dfCache.delete(oldest);
      kept -= entry.rows ? entry.terms : 0;
    }
    return cache;
  }

  /** Document frequency within the partition: from memory, or counted term by term and remembered. */
  #documentFrequencies(target: SearchTarget, cache: DfCache, whole: boolean): (term: string) => number {
    const postings = cache.postings;
    if (postings) return (term) => postings.get(term)?.length ?? 0;
    const fts = `${tableName(target.table)}_fts`;
    const vocab = this.#prepare(
      `SELECT doc FROM "${fts}_vocab" WHERE term = ? AND col = 'search_terms'`,
    ).pluck();
    const count = this.#prepare(`SELECT count(*) FROM "${fts}" WHERE "${fts}" MATCH ?`).pluck();
    const memo = cache.df;
    return (term) => {
      let value = memo.get(term);
      if (value === undefined) {
        value = whole
          ? ((vocab.get(term) as number | undefined) ?? 0)
          : (count.get(
              `search_scope : ${quoteFts(target.scope)} AND search_terms : ${quoteFts(term)}`,
            ) as number);
        memo.set(term, value);
      }
      return value;
    };
  }

  /** Taken now: the whole partition when it is small (SCAN_TERMS), else nothing yet (term by term). */
  #fresh(target: SearchTarget, stats: Stats): DfCache {
    const name = tableName(target.table);
    const maxSeq = (this.#prepare(`SELECT max(seq) FROM "${name}"`).pluck().get() as number | null) ?? 0;
    const cache: DfCache = { changes: stats.changes, maxSeq, terms: 0, df: new Map() };
    if (stats.terms > SCAN_TERMS) return cache;
    const fts = `${name}_fts`;
    const rows = this.#prepare(
      `SELECT t.seq, t.search_terms, t.search_length FROM "${fts}" JOIN "${name}" t ON t.seq = "${fts}".rowid
       WHERE "${fts}" MATCH ?`,
    )
      .raw()
      .all(`search_scope : ${quoteFts(target.scope)}`) as Array<[number, string, number]>;
    cache.rows = new Map();
    cache.postings = new Map();
    for (const row of rows) keep(cache, row);
    return cache;
  }

  /** Brings `cache` up to the partition's current state; false when it cannot (start afresh). */
  #catchUp(cache: DfCache, target: SearchTarget, stats: Stats): boolean {
    const delta = stats.changes - cache.changes;
    if (delta === 0) return true;
    if (delta < 0 || delta > MAX_REPLAYED) return false;
    // The partition's rows above `maxSeq`, found through its own FTS5 postings: other partitions' writes
    // cost nothing here.
    const name = tableName(target.table);
    const fts = `${name}_fts`;
    const rows = this.#prepare(
      `SELECT t.seq, t.search_terms, t.search_length FROM "${fts}" JOIN "${name}" t ON t.seq = "${fts}".rowid
       WHERE "${fts}" MATCH ? AND "${fts}".rowid > ? ORDER BY "${fts}".rowid LIMIT ?`,
    )
      .raw()
      .all(`search_scope : ${quoteFts(target.scope)}`, cache.maxSeq, delta + 1) as Array<
      [number, string, number]
    >;
    // Every change must be one of these inserts; a delete or update since (or a reused rowid) means not.
    if (rows.length !== delta) return false;
    for (const row of rows) {
      if (cache.rows) keep(cache, row);
      else {
        for (const term of new Set(row[1] ? row[1].split(' ') : [])) {
          const value = cache.df.get(term);
          if (value !== undefined) cache.df.set(term, value + 1);
        }
      }
    }
    cache.changes = stats.changes;
    cache.maxSeq = rows[rows.length - 1]![0];
    return true;
  }

  /** Runs a query built with drizzle's `sql`, its statement prepared once per SQL text. */
  #all(query: SQL): Candidate[] {
    const { sql: text, params } = dialect.sqlToQuery(query);
    return this.#prepare(text).all(...params) as Candidate[];
  }

  #prepare(source: string): Database.Statement {
    let statement = this.#statements.get(source);
    if (!statement) {
      statement = this.#connection.raw.prepare(source);
      this.#statements.set(source, statement);
    }
    return statement;
  }
}

const tableName = (table: SQLiteTable): string => getTableName(table);

const dialect = new SQLiteSyncDialect();

const MAX_CACHED_TERMS = 50_000;

/** Partitions whose document frequencies are kept (the least recently searched are dropped). */
const MAX_CACHED_PARTITIONS = 256;

/** A partition of at most this many terms (`kioku_record_search_stats.terms`) is read whole and kept in memory. */
const SCAN_TERMS = 100_000;

/** Terms of the partitions kept in memory, in all (at most about 60 MB with their counts). */
const MAX_KEPT_TERMS = 1_000_000;

/** Inserts into the partition a search replays into its document-frequency cache, at most. */
const MAX_REPLAYED = 1_000;

/** The `kioku_record_search_stats` scope that holds a table's totals. */
const TABLE_TOTALS = '';

interface Stats {
  rows: number;
  terms: number;
  changes: number;
}

interface DfCache {
  /** The partition's `changes` when this was last exact, and the highest `seq` it has seen of the table. */
  changes: number;
  maxSeq: number;
  /** Document frequencies counted term by term (a large partition). */
  df: Map<string, number>;
  /**
   * A small partition, whole: each row's analyzed text and length by `seq` (its term counts once a search
   * has pooled it: counting them is most of a search's time), each term's rows.
   */
  rows?: Map<number, { terms: string; length: number; tf?: ReadonlyMap<string, number> }>;
  postings?: Map<string, number[]>;
  /** Terms of the rows kept. */
  terms: number;
}

/** Adds a row of a small partition to what is kept of it. */
function keep(cache: DfCache, [seq, terms, length]: [number, string, number]): void {
  cache.rows!.set(seq, { terms, length });
  cache.terms += length;
  if (!terms) return;
  for (const term of new Set(terms.split(' '))) {
    const rows = cache.postings!.get(term);
    if (rows) rows.push(seq);
    else cache.postings!.set(term, [seq]);
  }
}

/** Pools the kept rows holding any of `terms`. */
function addKept(pool: Map<number, Pooled>, cache: DfCache, terms: readonly string[]): void {
  for (const term of terms) {
    for (const seq of cache.postings!.get(term) ?? []) {
      if (pool.has(seq)) continue;
      const row = cache.rows!.get(seq)!;
      row.tf ??= termCounts(row.terms);
      pool.set(seq, { seq, tf: row.tf, length: row.length });
    }
  }
}

/** Rows (summed document frequencies) the first stage of the `kioku` ranking lets FTS5 rank at most. */
const MATCH_BUDGET = 5_000;

/** Up to this many matching rows (summed document frequencies), every one is scored: core's exact ranking. */
const EXACT_BUDGET = 1_000;

/** The feedback round's MATCH_BUDGET: its words weigh less, and its rows seldom reach the top. */
const FEEDBACK_BUDGET = 1_000;
