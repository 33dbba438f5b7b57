/**
 * The raw-driver equivalents of what the SQL fact stores do for `create`, `get` and `search`, so the store
 * bench can put each adapter's figure beside the same work done by hand: the same SQL statements with the
 * same values, issued directly with better-sqlite3 (prepared once) or postgres.js (tagged templates and
 * `unsafe(…, { prepare: true })`). What the adapters add on top — input validation (zod), drizzle building
 * the SQL on every call, the transaction around each operation, mapping rows to `Fact`s, error mapping — is
 * what the overhead ratio measures.
 *
 * SQLite search follows `packages/store-sqlite/src/search.ts` step by step (the `kioku` ranking): the
 * partition's statistics, document frequencies from the FTS5 vocabulary (cached while the database is
 * unchanged), the rarest terms into the FTS5 `bm25()` candidate query (newest rows with a common term when
 * that finds too few), core's BM25+ with coverage on the candidates, one round of pseudo-relevance feedback
 * (a second candidate query with the expanded terms), then the winners' rows by `seq`. A partition holding
 * at least half of the table is kept by a join rather than a phrase of the MATCH, as the adapter does.
 * PostgreSQL search is the adapter's two queries (the query's lexemes, then coverage + `ts_rank` over the
 * GIN matches), written as one would by hand: the score is computed once and ordered by its alias.
 */
import { DEFAULT_BM25, DEFAULT_FEEDBACK, englishAnalyzer, factSearchText } from '@kioku/core';
import type Database from 'better-sqlite3';
import type { Sql } from 'postgres';
import type { FactSeed } from './facts.js';

export interface RawFact {
  id: string;
  content: string;
  tags: string[];
  metadata: Record<string, unknown>;
  provenance: Record<string, unknown>;
}

/** core's English analysis of a fact: what the SQLite adapter stores in `search_terms`. */
function analyzed(seed: FactSeed): { terms: string; length: number } {
  const terms = englishAnalyzer.terms(factSearchText(seed));
  return { terms: terms.join(' '), length: terms.length };
}

const FACT_COLUMNS =
  'seq, user_id, agent_id, id, title, content, category, tags, metadata, provenance, created_at, updated_at, search_terms, search_length, search_scope';

interface SqliteFactRow {
  seq: number;
  user_id: string;
  agent_id: string;
  id: string;
  title: string | null;
  content: string;
  category: string;
  tags: string;
  metadata: string;
  provenance: string;
  created_at: string;
  updated_at: string;
}

function sqliteFact(row: SqliteFactRow): RawFact & Record<string, unknown> {
  return {
    id: row.id,
    userId: row.user_id,
    agentId: row.agent_id,
    title: row.title,
    content: row.content,
    category: row.category,
    tags: JSON.parse(row.tags) as string[],
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    provenance: JSON.parse(row.provenance) as Record<string, unknown>,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

interface Candidate {
  seq: number;
  terms: string;
  length: number;
  rank: number;
}

/** Where the partition stands in its table: all of it, or at least half of it. */
interface Place {
  whole: boolean;
  dominant: boolean;
}

interface Scored {
  seq: number;
  score: number;
  tf: Map<string, number>;
  length: number;
}

/** As in the adapter: FTS5 ranks at most this many postings in the first stage. */
const MATCH_BUDGET = 5_000;
const CANDIDATES = 100;
const quote = (term: string) => `"${term.replaceAll('"', '""')}"`;

/** One user's facts (no agent) in a database set up by `@kioku/store-sqlite`, through better-sqlite3 alone. */
export class RawSqliteFacts {
  readonly #db: Database.Database;
  readonly #userId: string;
  readonly #scope: string;
  readonly #insert: Database.Statement;
  readonly #byId: Database.Statement;
  readonly #stats: Database.Statement;
  readonly #tableRows: Database.Statement;
  readonly #version: Database.Statement;
  readonly #vocab: Database.Statement;
  readonly #count: Database.Statement;
  readonly #candidates: Database.Statement;
  readonly #candidatesJoined: Database.Statement;
  readonly #newest: Database.Statement;
  readonly #bySeq = new Map<number, Database.Statement>();
  #dfVersion = '';
  #df = new Map<string, number>();

  constructor(db: Database.Database, userId: string) {
    this.#db = db;
    this.#userId = userId;
    this.#scope = `p${Buffer.from(`${userId}/`, 'utf8').toString('hex').toUpperCase()}`;
    this.#insert = db.prepare(
      `INSERT INTO kioku_facts (user_id, agent_id, id, title, content, category, tags, metadata, provenance,
         created_at, updated_at, search_terms, search_length) VALUES (?, '', ?, NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT DO NOTHING`,
    );
    this.#byId = db.prepare(
      `SELECT ${FACT_COLUMNS} FROM kioku_facts WHERE user_id = ? AND agent_id = '' AND id = ?`,
    );
    this.#stats = db.prepare(
      "SELECT rows, terms FROM kioku_search_stats WHERE table_name = 'kioku_facts' AND scope = ?",
    );
    this.#tableRows = db
      .prepare("SELECT total(rows) FROM kioku_search_stats WHERE table_name = 'kioku_facts'")
      .pluck();
    this.#version = db
      .prepare("SELECT total_changes() || '/' || data_version FROM pragma_data_version")
      .pluck();
    this.#vocab = db
      .prepare("SELECT doc FROM kioku_facts_fts_vocab WHERE term = ? AND col = 'search_terms'")
      .pluck();
    this.#count = db.prepare('SELECT count(*) FROM kioku_facts_fts WHERE kioku_facts_fts MATCH ?').pluck();
    this.#candidates = db.prepare(
      `SELECT m.seq AS seq, m.rank AS rank, f.search_terms AS terms, f.search_length AS length
       FROM (SELECT rowid AS seq, rank FROM kioku_facts_fts WHERE kioku_facts_fts MATCH ? ORDER BY rank LIMIT ?) m
       JOIN kioku_facts f ON f.seq = m.seq ORDER BY m.rank`,
    );
    this.#candidatesJoined = db.prepare(
      `SELECT m.seq AS seq, m.rank AS rank, f.search_terms AS terms, f.search_length AS length
       FROM (SELECT kioku_facts_fts.rowid AS seq, kioku_facts_fts.rank AS rank
             FROM kioku_facts_fts JOIN kioku_facts ON kioku_facts.seq = kioku_facts_fts.rowid
             WHERE kioku_facts_fts MATCH ? AND kioku_facts.search_scope = ? ORDER BY kioku_facts_fts.rank LIMIT ?) m
       JOIN kioku_facts f ON f.seq = m.seq ORDER BY m.rank`,
    );
    this.#newest = db.prepare(
      `SELECT f.seq AS seq, 0 AS rank, f.search_terms AS terms, f.search_length AS length
       FROM kioku_facts_fts JOIN kioku_facts f ON f.seq = kioku_facts_fts.rowid
       WHERE kioku_facts_fts MATCH ? ORDER BY kioku_facts_fts.rowid DESC LIMIT ?`,
    );
  }

  /** The adapter's INSERT with the same values (search terms from core's analyzer), in autocommit. */
  create(id: string, seed: FactSeed, now: string): void {
    const search = analyzed(seed);
    const info = this.#insert.run(
      this.#userId,
      id,
      seed.content,
      seed.category,
      JSON.stringify(seed.tags),
      '{}',
      JSON.stringify({ source: 'user' }),
      now,
      now,
      search.terms,
      search.length,
    );
    if (info.changes === 0) throw new Error(`raw insert of ${id} conflicted`);
  }

  get(id: string): RawFact | null {
    const row = this.#byId.get(this.#userId, id) as SqliteFactRow | undefined;
    return row ? sqliteFact(row) : null;
  }

  search(query: string, limit = 8): RawFact[] {
    const weights = new Map<string, number>();
    for (const term of englishAnalyzer.terms(query)) weights.set(term, (weights.get(term) ?? 0) + 1);
    if (weights.size === 0) return [];
    const stats = this.#stats.get(this.#scope) as { rows: number; terms: number } | undefined;
    if (!stats || stats.rows === 0) return [];
    const tableRows = this.#tableRows.get() as number;
    const whole = tableRows === stats.rows;
    const dominant = stats.rows * 2 >= tableRows;
    const df = this.#documentFrequencies(whole);
    const original = new Set(weights.keys());
    const depth = Math.max(CANDIDATES, limit * 4);
    const tfs = new Map<number, Map<string, number>>();
    const place = { whole, dominant };
    let ranked = this.#rank(place, weights, original, depth, stats, df, tfs).slice(
      0,
      Math.max(limit, DEFAULT_FEEDBACK.docs),
    );
    const expanded = expand(ranked, weights, stats.rows, df);
    if (expanded) ranked = this.#rank(place, expanded, original, depth, stats, df, tfs);
    const top = ranked.slice(0, limit);
    if (top.length === 0) return [];
    let bySeq = this.#bySeq.get(top.length);
    if (!bySeq) {
      bySeq = this.#db.prepare(
        `SELECT ${FACT_COLUMNS} FROM kioku_facts WHERE seq IN (${top.map(() => '?').join(', ')})`,
      );
      this.#bySeq.set(top.length, bySeq);
    }
    const rows = new Map(
      (bySeq.all(...top.map((r) => r.seq)) as SqliteFactRow[])
        .filter((row) => row.user_id === this.#userId && row.agent_id === '')
        .map((row) => [row.seq, row]),
    );
    return top.flatMap((r) => {
      const row = rows.get(r.seq);
      return row ? [sqliteFact(row)] : [];
    });
  }

  #match(whole: boolean, terms: Iterable<string>): string {
    const any = `search_terms : (${[...terms].map(quote).join(' OR ')})`;
    return whole ? any : `search_scope : ${quote(this.#scope)} AND ${any}`;
  }

  #documentFrequencies(whole: boolean): (term: string) => number {
    const version = this.#version.get() as string;
    if (version !== this.#dfVersion) {
      this.#df = new Map();
      this.#dfVersion = version;
    }
    const cache = this.#df;
    return (term) => {
      let value = cache.get(term);
      if (value === undefined) {
        value = whole
          ? ((this.#vocab.get(term) as number | undefined) ?? 0)
          : (this.#count.get(
              `search_scope : ${quote(this.#scope)} AND search_terms : ${quote(term)}`,
            ) as number);
        cache.set(term, value);
      }
      return value;
    };
  }

  #rank(
    place: Place,
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
    for (const c of this.#selectiveCandidates(place, weights, depth, df)) {
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

  #selectiveCandidates(
    place: Place,
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
    // As the adapter: a partition holding at least half of the table is kept by a join, not in the MATCH.
    const found = (
      place.whole || !place.dominant
        ? this.#candidates.all(this.#match(place.whole, selective), depth)
        : this.#candidatesJoined.all(this.#match(true, selective), this.#scope, depth)
    ) as Candidate[];
    const rest = present.slice(selective.length);
    if (rest.length === 0 || found.length >= depth) return found;
    const seen = new Set(found.map((c) => c.seq));
    const fill = (
      this.#newest.all(this.#match(place.whole, rest), depth - found.length + seen.size) as Candidate[]
    ).filter((c) => !seen.has(c.seq));
    return [...found, ...fill.slice(0, depth - found.length)];
  }
}

function termCounts(terms: string): Map<string, number> {
  const counts = new Map<string, number>();
  if (!terms) return counts;
  for (const term of terms.split(' ')) counts.set(term, (counts.get(term) ?? 0) + 1);
  return counts;
}

/** Pseudo-relevance feedback exactly as the adapter (and core) does it. */
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

/** A lexeme as a one-term tsquery literal, as the adapter writes it. */
const termLiteral = (lexeme: string) => `'${lexeme.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;

const PG_COLUMNS =
  'user_id, agent_id, id, title, content, category, tags, metadata, provenance, created_at, updated_at';

/** One user's facts (no agent) in a schema set up by `@kioku/store-postgres`, through postgres.js alone. */
export class RawPostgresFacts {
  readonly #sql: Sql;
  readonly #schema: string;
  readonly #userId: string;
  readonly #searchText = new Map<number, string>();

  constructor(sql: Sql, schema: string, userId: string) {
    this.#sql = sql;
    this.#schema = schema;
    this.#userId = userId;
  }

  /** The adapter's INSERT … ON CONFLICT DO NOTHING RETURNING id with the same values. */
  async create(id: string, seed: FactSeed, now: string): Promise<void> {
    const sql = this.#sql;
    const rows = await sql`
      insert into ${sql(this.#schema)}.facts
        (user_id, agent_id, id, title, content, category, tags, tag_keys, metadata, provenance, created_at, updated_at)
      values (${this.#userId}, '', ${id}, null, ${seed.content}, ${seed.category}, ${JSON.stringify(seed.tags)}::json,
        ${seed.tags.map((t) => t.toLowerCase())}::text[], '{}'::json, ${JSON.stringify({ source: 'user' })}::json,
        ${now}::timestamptz, ${now}::timestamptz)
      on conflict do nothing returning id`;
    if (rows.length === 0) throw new Error(`raw insert of ${id} conflicted`);
  }

  async get(id: string): Promise<RawFact | null> {
    const sql = this.#sql;
    const rows = await sql<RawFact[]>`
      select ${sql.unsafe(PG_COLUMNS)} from ${sql(this.#schema)}.facts
      where user_id = ${this.#userId} and agent_id = '' and id = ${id}`;
    return rows[0] ?? null;
  }

  /**
   * Dynamic memory's read: the first page newest-updated first (core's order: ties newest created, then id
   * byte-wise) and the partition's fact count, which the adapter keeps in `fact_counts` by triggers.
   */
  async updatedPage(limit = 128, offset = 0): Promise<RawFact[]> {
    const sql = this.#sql;
    return sql<RawFact[]>`
      select ${sql.unsafe(PG_COLUMNS)} from ${sql(this.#schema)}.facts
      where user_id = ${this.#userId} and agent_id = ''
      order by updated_at desc, created_at desc, id collate "C" limit ${limit} offset ${offset}`;
  }

  async count(): Promise<number> {
    const sql = this.#sql;
    const [row] = await sql<{ n: string }[]>`
      select n from ${sql(this.#schema)}.fact_counts where user_id = ${this.#userId} and agent_id = ''`;
    return Number(row?.n ?? 0);
  }

  async search(query: string, limit = 8): Promise<RawFact[]> {
    const sql = this.#sql;
    const text = query.replaceAll('\u0000', ' ');
    const [row] = await sql<{ lexemes: string[] }[]>`
      select tsvector_to_array(to_tsvector('english'::regconfig, ${text}::text)) as lexemes`;
    const lexemes = row?.lexemes ?? [];
    if (lexemes.length === 0) return [];
    const n = lexemes.length;
    let statement = this.#searchText.get(n);
    if (!statement) {
      const coverage = lexemes.map((_, i) => `(search @@ $${i + 1}::tsquery)::int`).join(' + ');
      statement = `select ${PG_COLUMNS}, (${coverage} + ts_rank(search, $${n + 1}::tsquery, 33)) as score
        from "${this.#schema}".facts
        where user_id = $${n + 2} and agent_id = '' and search @@ $${n + 1}::tsquery
        order by score desc, seq asc limit $${n + 3}`;
      this.#searchText.set(n, statement);
    }
    const literals = lexemes.map(termLiteral);
    return (await sql.unsafe(statement, [...literals, literals.join(' | '), this.#userId, limit], {
      prepare: true,
    })) as unknown as RawFact[];
  }
}
