import { DEFAULT_BM25, DEFAULT_FEEDBACK } from '@kioku/core';
import type Database from 'better-sqlite3';
import { getTableName, type SQL, sql } from 'drizzle-orm';
import type { SQLiteTable } from 'drizzle-orm/sqlite-core';
import { queryTerms } from './analysis.js';
import type { KiokuDrizzle } from './connection.js';

/**
 * How search results are ordered.
 * - `kioku` (default): FTS5 `bm25()` picks the candidates, which are then scored exactly as core's
 *   LexicalIndex scores them (BM25+ with k1 1.2, b 0.5, d 1, times the number of query terms matched,
 *   then one round of pseudo-relevance feedback), with statistics of the caller's partition only.
 *   On LoCoMo this gives core's recall to the decimal.
 * - `bm25`: FTS5's `bm25()` order as it is (k1 1.2, b 0.75, statistics of the whole table): one query,
 *   cheaper, a few points of recall lower.
 */
export type Ranking = 'kioku' | 'bm25';

export interface SearchSettings {
  ranking: Ranking;
  /** Candidates `bm25()` hands to the `kioku` ranking: at least this many (default 100), and 4× the limit. */
  candidates: number;
}

export const DEFAULT_SEARCH: Readonly<SearchSettings> = Object.freeze({ ranking: 'kioku', candidates: 100 });

/** One searchable table: its name and its FTS5 index (`<table>_fts`, with `<table>_fts_vocab`). */
export interface SearchTarget {
  table: SQLiteTable;
  /** The partition: the same token the table's `search_scope` column computes. */
  scope: string;
  /** Set when the partition holds every row of the table: FTS5 then needs no partition constraint. */
  whole?: boolean;
  /**
   * Set when the partition holds at least half of the table's rows: FTS5 then ranks on the terms alone and
   * the partition is kept by a join (see `#candidates`).
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

interface Candidate {
  seq: number;
  terms: string;
  length: number;
  rank: number;
}

interface Scored {
  seq: number;
  score: number;
  tf: Map<string, number>;
  length: number;
}

/** Runs lexical searches over one connection; statements are prepared once per SQL text. */
export class LexicalSearch {
  readonly #db: Database.Database;
  readonly #orm: KiokuDrizzle;
  readonly #settings: SearchSettings;
  readonly #statements = new Map<string, Database.Statement>();
  /** Document frequencies per table and partition, valid while the database is unchanged. */
  readonly #dfCache = new Map<string, Map<string, number>>();
  #dfVersion = '';

  constructor(db: Database.Database, orm: KiokuDrizzle, settings: Partial<SearchSettings> = {}) {
    this.#db = db;
    this.#orm = orm;
    this.#settings = { ...DEFAULT_SEARCH, ...settings };
  }

  /** Best matches first; an empty list when the query has no searchable term (only stop words, say). */
  search(request: SearchTarget, query: string, limit: number): RankedRow[] {
    const weights = queryTerms(query);
    if (weights.size === 0) return [];
    if (this.#settings.ranking === 'bm25') {
      return this.#candidates(request, weights.keys(), limit).map((c) => ({ seq: c.seq, score: -c.rank }));
    }
    const stats = this.#stats(request);
    if (stats.rows === 0) return [];
    const tableRows = this.#prepare('SELECT total(rows) FROM kioku_search_stats WHERE table_name = ?')
      .pluck()
      .get(tableName(request.table)) as number;
    const target = { ...request, whole: tableRows === stats.rows, dominant: stats.rows * 2 >= tableRows };
    const original = new Set(weights.keys());
    const df = this.#documentFrequencies(target);
    const depth = Math.max(this.#settings.candidates, limit * 4);
    const feedback = DEFAULT_FEEDBACK;
    const tfs = new Map<number, Map<string, number>>();
    let ranked = this.#rank(target, weights, original, depth, stats, df, tfs).slice(
      0,
      Math.max(limit, feedback.docs),
    );
    const expanded = expand(ranked, weights, stats.rows, df);
    if (expanded) ranked = this.#rank(target, expanded, original, depth, stats, df, tfs);
    return ranked.slice(0, limit).map(({ seq, score }) => ({ seq, score }));
  }

  /** Candidates scored as core scores them: BM25+ per term times its weight, summed, times coverage. */
  #rank(
    target: SearchTarget,
    weights: ReadonlyMap<string, number>,
    original: ReadonlySet<string>,
    depth: number,
    stats: { rows: number; terms: number },
    df: (term: string) => number,
    tfs: Map<number, Map<string, number>>,
  ): Scored[] {
    const { k1, b, d } = DEFAULT_BM25;
    const n = stats.rows;
    const avgLength = stats.terms / n || 1;
    const idf = new Map<string, number>();
    for (const [term, weight] of weights) {
      const f = df(term);
      idf.set(term, weight * Math.log(1 + (n - f + 0.5) / (f + 0.5)));
    }
    const out: Scored[] = [];
    for (const c of this.#selectiveCandidates(target, weights, depth, df)) {
      let tf = tfs.get(c.seq);
      if (!tf) {
        tf = termCounts(c.terms);
        tfs.set(c.seq, tf);
      }
      const norm = k1 * (1 - b) + (k1 * b * c.length) / avgLength;
      let score = 0;
      let covered = 0;
      for (const [term, termIdf] of idf) {
        const f = tf.get(term);
        if (!f) continue;
        score += termIdf * (d + (f * (k1 + 1)) / (f + norm));
        if (original.has(term)) covered += 1;
      }
      out.push({ seq: c.seq, score: score * (covered || 1), tf, length: c.length });
    }
    return out.sort((x, y) => y.score - x.score || x.seq - y.seq);
  }

  /**
   * Candidates for the `kioku` ranking. FTS5 ranks every row that matches any term, so a term that
   * occurs in much of a large partition ("user" in a million facts) would make every query slow.
   * The rarest terms go into the MATCH until their rows add up to MATCH_BUDGET; the common rest still
   * count in the scores (read from each candidate's terms). When the rare terms match fewer rows than
   * wanted, the newest rows with a common term fill up. Small partitions always match on every term.
   */
  #selectiveCandidates(
    target: SearchTarget,
    weights: ReadonlyMap<string, number>,
    depth: number,
    df: (term: string) => number,
  ): Candidate[] {
    const present = [...weights.keys()].filter((term) => df(term) > 0).sort((a, b) => df(a) - df(b));
    if (present.length === 0) return [];
    const selective: string[] = [];
    let postings = 0;
    for (const term of present) {
      if (selective.length > 0 && postings + df(term) > MATCH_BUDGET) break;
      selective.push(term);
      postings += df(term);
    }
    const found = this.#candidates(target, selective, depth);
    const rest = present.slice(selective.length);
    if (rest.length === 0 || found.length >= depth) return found;
    const seen = new Set(found.map((c) => c.seq));
    const fill = this.#newest(target, rest, depth - found.length + seen.size).filter((c) => !seen.has(c.seq));
    return [...found, ...fill.slice(0, depth - found.length)];
  }

  /** The newest rows of the partition matching any of `terms` (no ranking: FTS5 walks rowids backwards). */
  #newest(target: SearchTarget, terms: Iterable<string>, limit: number): Candidate[] {
    const t = target.table;
    const fts = sql.identifier(`${tableName(t)}_fts`);
    const match = ftsExpression(target.whole ? undefined : target.scope, terms);
    const filter = target.where ? sql` AND (${target.where})` : sql``;
    return this.#orm.all<Candidate>(
      sql`SELECT ${t}.seq AS seq, 0 AS rank, ${t}.search_terms AS terms, ${t}.search_length AS length
          FROM ${fts} JOIN ${t} ON ${t}.seq = ${fts}.rowid
          WHERE ${fts} MATCH ${match}${filter} ORDER BY ${fts}.rowid DESC LIMIT ${limit}`,
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
  #candidates(target: SearchTarget, terms: Iterable<string>, limit: number): Candidate[] {
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
    return this.#orm.all<Candidate>(
      sql`SELECT m.seq AS seq, m.rank AS rank, ${t}.search_terms AS terms, ${t}.search_length AS length
          FROM (${top}) m JOIN ${t} ON ${t}.seq = m.seq ORDER BY m.rank`,
    );
  }

  #stats(target: SearchTarget): { rows: number; terms: number } {
    const row = this.#prepare(
      'SELECT rows, terms FROM kioku_search_stats WHERE table_name = ? AND scope = ?',
    ).get(tableName(target.table), target.scope) as { rows: number; terms: number } | undefined;
    return row ?? { rows: 0, terms: 0 };
  }

  /**
   * Document frequency within the partition. When the partition is the whole table, FTS5's vocabulary
   * answers directly; otherwise the partition's matches are counted. Counts are cached until the
   * database changes (this connection's `total_changes()` or, for other connections, `data_version`).
   */
  #documentFrequencies(target: SearchTarget): (term: string) => number {
    const name = tableName(target.table);
    const fts = `${name}_fts`;
    const version = this.#prepare("SELECT total_changes() || '/' || data_version FROM pragma_data_version")
      .pluck()
      .get() as string;
    if (version !== this.#dfVersion) {
      this.#dfCache.clear();
      this.#dfVersion = version;
    }
    const cacheKey = `${name}/${target.scope}`;
    let memo = this.#dfCache.get(cacheKey);
    if (!memo || memo.size > MAX_CACHED_TERMS) {
      memo = new Map();
      this.#dfCache.set(cacheKey, memo);
    }
    const whole = target.whole === true;
    const vocab = this.#prepare(
      `SELECT doc FROM "${fts}_vocab" WHERE term = ? AND col = 'search_terms'`,
    ).pluck();
    const count = this.#prepare(`SELECT count(*) FROM "${fts}" WHERE "${fts}" MATCH ?`).pluck();
    const cache = memo;
    return (term) => {
      let value = cache.get(term);
      if (value === undefined) {
        value = whole
          ? ((vocab.get(term) as number | undefined) ?? 0)
          : (count.get(
              `search_scope : ${quoteFts(target.scope)} AND search_terms : ${quoteFts(term)}`,
            ) as number);
        cache.set(term, value);
      }
      return value;
    };
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

const tableName = (table: SQLiteTable): string => getTableName(table);

const MAX_CACHED_TERMS = 50_000;

/** Rows (summed document frequencies) the first stage of the `kioku` ranking lets FTS5 rank at most. */
const MATCH_BUDGET = 5_000;

/** Term frequencies of an analyzed text, in order of first occurrence. */
function termCounts(terms: string): Map<string, number> {
  const counts = new Map<string, number>();
  if (!terms) return counts;
  for (const term of terms.split(' ')) counts.set(term, (counts.get(term) ?? 0) + 1);
  return counts;
}

/**
 * Pseudo-relevance feedback as core does it: the most characteristic terms (tf × idf, weighted by each
 * result's share of the best score) of the top results join the query at a lower weight.
 */
function expand(
  ranked: readonly Scored[],
  weights: ReadonlyMap<string, number>,
  n: number,
  df: (term: string) => number,
): Map<string, number> | undefined {
  const params = DEFAULT_FEEDBACK;
  if (params.docs <= 0 || params.terms <= 0 || ranked.length === 0) return undefined;
  const best = ranked[0]!.score;
  if (!(best > 0)) return undefined;
  const candidates = new Map<string, number>();
  for (const r of ranked.slice(0, params.docs)) {
    if (r.length === 0) continue;
    const share = r.score / best / r.length;
    for (const [term, tf] of r.tf) {
      if (weights.has(term)) continue;
      const f = df(term);
      const idf = Math.log(1 + (n - f + 0.5) / (f + 0.5));
      candidates.set(term, (candidates.get(term) ?? 0) + share * tf * idf);
    }
  }
  if (candidates.size === 0) return undefined;
  const chosen = [...candidates].sort((x, y) => y[1] - x[1]).slice(0, params.terms);
  const top = chosen[0]![1];
  const expanded = new Map<string, number>();
  for (const [term, w] of weights) expanded.set(term, w * params.queryWeight);
  for (const [term, w] of chosen) expanded.set(term, ((1 - params.queryWeight) * w) / top);
  return expanded;
}
