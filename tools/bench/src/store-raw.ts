/**
 * The raw-driver equivalents of what the SQL fact stores do for `create`, `get` and `search`, so the store
 * bench can put each adapter's figure beside the same work done by hand: the same SQL statements with the
 * same values, issued directly with better-sqlite3 (prepared once) or postgres.js (tagged templates and
 * `unsafe(…, { prepare: true })`). What the adapters add on top — input validation (zod), drizzle building
 * the SQL on every call, the transaction around each operation, mapping rows to `Fact`s, error mapping — is
 * what the overhead ratio measures.
 *
 * SQLite search follows `packages/store-sqlite/src/search.ts` step by step (the `kioku` ranking), in one
 * read transaction: the partition's and the table's statistics (`kioku_search_stats`), document frequencies
 * (a small partition's counted whole in one pass over its rows, a larger one's term by term from FTS5;
 * cached, and caught up over the partition's inserts by the `changes` counters as the adapter does), the candidate rows (all matches when they are few; else the rare words' FTS5 `bm25()` best, the
 * newest rows holding every telling word or a rare word and another, the newest with a common word when
 * short), core's BM25+ with coverage over every candidate, one round of pseudo-relevance feedback (the
 * feedback words' rows added to the same pool), then the winners' rows by `seq`. A partition holding at
 * least half of the table is ranked through a join rather than a phrase of the MATCH, as the adapter does.
 * PostgreSQL search follows `packages/store-postgres/src/fact-search.ts` the same way: statistics and document
 * frequencies from the trigger-kept `fact_counts` / `fact_terms`, candidates through the GIN index on
 * `string_to_array(search_terms)` (all of them, or a sample of the first found; or the partition's own index), core's scoring in
 * TypeScript, the feedback round, then the winners' rows by primary key.
 */
import {
  DEFAULT_FEEDBACK,
  englishAnalyzer,
  expandQuery,
  factSearchText,
  feedbackTerms,
  type RankCandidate,
  scoreCandidates,
  termCounts,
  termsByRarity,
} from '@kioku/core/adapter';
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
}

/** Where the partition stands in its table: all of it, or at least half of it. */
interface Place {
  whole: boolean;
  dominant: boolean;
}

type Pooled = RankCandidate;

interface Stats {
  rows: number;
  terms: number;
  changes: number;
}

/** As in the adapter (`packages/store-sqlite/src/search.ts`). */
const MATCH_BUDGET = 5_000;
const EXACT_BUDGET = 1_000;
const FEEDBACK_BUDGET = 1_000;
const MAX_REPLAYED = 1_000;
const MAX_CACHED_TERMS = 50_000;
const SCAN_TERMS = 100_000;
const CANDIDATES = 100;
const quote = (term: string) => `"${term.replaceAll('"', '""')}"`;
const anyOf = (terms: readonly string[]) => `(${terms.map(quote).join(' OR ')})`;

/** One user's facts (no agent) in a database set up by `@kioku/store-sqlite`, through better-sqlite3 alone. */
export class RawSqliteFacts {
  readonly #db: Database.Database;
  readonly #userId: string;
  readonly #scope: string;
  readonly #insert: Database.Statement;
  readonly #byId: Database.Statement;
  readonly #stats: Database.Statement;
  readonly #updatedPage: Database.Statement;
  readonly #maxSeq: Database.Statement;
  readonly #inserted: Database.Statement;
  readonly #partitionRows: Database.Statement;
  readonly #scopeMatch: string;
  readonly #vocab: Database.Statement;
  readonly #count: Database.Statement;
  readonly #ranked: Database.Statement;
  readonly #rankedJoined: Database.Statement;
  readonly #newest: Database.Statement;
  readonly #newestJoined: Database.Statement;
  readonly #matching: Database.Statement;
  readonly #matchingJoined: Database.Statement;
  readonly #bySeq: Database.Statement;
  /** Document frequencies of the partition, kept across inserts as the adapter keeps them. */
  #df: { changes: number; maxSeq: number; df: Map<string, number>; kept?: Kept } | undefined;

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
    this.#bySeq = db.prepare(
      `SELECT ${FACT_COLUMNS} FROM kioku_facts WHERE seq IN (SELECT value FROM json_each(?))`,
    );
    this.#stats = db.prepare(
      "SELECT rows, terms, changes FROM kioku_search_stats WHERE table_name = 'kioku_facts' AND scope = ?",
    );
    this.#updatedPage = db.prepare(
      `SELECT ${FACT_COLUMNS} FROM kioku_facts WHERE user_id = ? AND agent_id = ''
       ORDER BY updated_at DESC, created_at DESC, id LIMIT ? OFFSET ?`,
    );
    this.#maxSeq = db.prepare('SELECT max(seq) FROM kioku_facts').pluck();
    this.#scopeMatch = `search_scope : ${quote(this.#scope)}`;
    this.#inserted = db
      .prepare(
        `SELECT f.seq, f.search_terms, f.search_length FROM kioku_facts_fts JOIN kioku_facts f ON f.seq = kioku_facts_fts.rowid
         WHERE kioku_facts_fts MATCH ? AND kioku_facts_fts.rowid > ? ORDER BY kioku_facts_fts.rowid LIMIT ?`,
      )
      .raw();
    this.#partitionRows = db
      .prepare(
        'SELECT f.seq, f.search_terms, f.search_length FROM kioku_facts_fts JOIN kioku_facts f ON f.seq = kioku_facts_fts.rowid WHERE kioku_facts_fts MATCH ?',
      )
      .raw();
    this.#vocab = db
      .prepare("SELECT doc FROM kioku_facts_fts_vocab WHERE term = ? AND col = 'search_terms'")
      .pluck();
    this.#count = db.prepare('SELECT count(*) FROM kioku_facts_fts WHERE kioku_facts_fts MATCH ?').pluck();
    this.#ranked = db.prepare(
      `SELECT m.seq AS seq, f.search_terms AS terms, f.search_length AS length
       FROM (SELECT rowid AS seq, rank FROM kioku_facts_fts WHERE kioku_facts_fts MATCH ? ORDER BY rank LIMIT ?) m
       JOIN kioku_facts f ON f.seq = m.seq ORDER BY m.rank`,
    );
    this.#rankedJoined = db.prepare(
      `SELECT m.seq AS seq, f.search_terms AS terms, f.search_length AS length
       FROM (SELECT kioku_facts_fts.rowid AS seq, kioku_facts_fts.rank AS rank
             FROM kioku_facts_fts JOIN kioku_facts ON kioku_facts.seq = kioku_facts_fts.rowid
             WHERE kioku_facts_fts MATCH ? AND kioku_facts.search_scope = ? ORDER BY kioku_facts_fts.rank LIMIT ?) m
       JOIN kioku_facts f ON f.seq = m.seq ORDER BY m.rank`,
    );
    const rows = `SELECT f.seq AS seq, f.search_terms AS terms, f.search_length AS length
       FROM kioku_facts_fts JOIN kioku_facts f ON f.seq = kioku_facts_fts.rowid WHERE kioku_facts_fts MATCH ?`;
    const newest = 'ORDER BY kioku_facts_fts.rowid DESC LIMIT ?';
    this.#newest = db.prepare(`${rows} ${newest}`);
    this.#newestJoined = db.prepare(`${rows} AND f.search_scope = ? ${newest}`);
    this.#matching = db.prepare(rows);
    this.#matchingJoined = db.prepare(`${rows} AND f.search_scope = ?`);
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

  /** The fact block's page (mode `all`): newest updated first, as the adapter's `list({ order: 'updated' })`. */
  updatedPage(limit = 128, offset = 0): RawFact[] {
    return (this.#updatedPage.all(this.#userId, limit, offset) as SqliteFactRow[]).map(sqliteFact);
  }

  /** The partition's row count, kept by the FTS triggers, as the adapter's unfiltered `count()` reads it. */
  count(): number {
    return (this.#stats.get(this.#scope) as Stats | undefined)?.rows ?? 0;
  }

  /** As the adapter, in one read transaction: candidates pooled over both rounds, each scored exactly. */
  search(query: string, limit = 8): RawFact[] {
    return this.#db.transaction(() => this.#search(query, limit)).deferred();
  }

  #search(query: string, limit: number): RawFact[] {
    const weights = new Map<string, number>();
    for (const term of englishAnalyzer.terms(query)) weights.set(term, (weights.get(term) ?? 0) + 1);
    if (weights.size === 0) return [];
    const stats = this.#stats.get(this.#scope) as Stats | undefined;
    if (!stats || stats.rows === 0) return [];
    const table = this.#stats.get('') as Stats;
    const place = { whole: table.rows === stats.rows, dominant: stats.rows * 2 >= table.rows };
    const df = this.#documentFrequencies(place.whole, stats);
    const original = new Set(weights.keys());
    const depth = Math.max(CANDIDATES, limit * 4);
    const pool = new Map<number, Pooled>();
    this.#gather(place, weights, original, depth, df, pool, stats.rows);
    let ranked = scoreCandidates(pool.values(), weights, original, stats, df);
    const expanded = expandQuery(ranked, weights, stats.rows, df);
    if (expanded) {
      this.#gather(place, expanded, original, depth, df, pool, stats.rows);
      ranked = scoreCandidates(pool.values(), expanded, original, stats, df);
    }
    const top = ranked.slice(0, limit);
    if (top.length === 0) return [];
    const rows = new Map(
      (this.#bySeq.all(JSON.stringify(top.map((r) => r.seq))) as SqliteFactRow[])
        .filter((row) => row.user_id === this.#userId && row.agent_id === '')
        .map((row) => [row.seq, row]),
    );
    return top.flatMap((r) => {
      const row = rows.get(r.seq);
      return row ? [sqliteFact(row)] : [];
    });
  }

  #gather(
    place: Place,
    weights: ReadonlyMap<string, number>,
    original: ReadonlySet<string>,
    depth: number,
    df: (term: string) => number,
    pool: Map<number, Pooled>,
    rows: number,
  ): void {
    const terms = termsByRarity(weights, original, df, { match: MATCH_BUDGET, feedback: FEEDBACK_BUDGET });
    if (!terms) return;
    const { feedback, present, postings, rare, common, anchor } = terms;
    const kept = this.#df?.kept;
    if (kept) {
      // A small partition kept in memory: every row holding a present word.
      for (const term of present) {
        for (const seq of kept.postings.get(term) ?? []) {
          if (pool.has(seq)) continue;
          const row = kept.rows.get(seq)!;
          row.tf ??= termCounts(row.terms);
          pool.set(seq, { seq, tf: row.tf, length: row.length });
        }
      }
      return;
    }
    // As the adapter: a partition holding at least half of the table is kept by a join, not in the MATCH.
    const joined = !place.whole && place.dominant;
    const scoped = (expression: string) =>
      place.whole || joined
        ? `search_terms : ${expression}`
        : `search_scope : ${quote(this.#scope)} AND search_terms : ${expression}`;
    const newest = (groups: readonly (readonly string[])[]) => {
      const match = scoped(`(${groups.map(anyOf).join(' AND ')})`);
      const rows = joined
        ? this.#newestJoined.all(match, this.#scope, depth)
        : this.#newest.all(match, depth);
      add(pool, rows as Candidate[]);
    };
    if (postings <= EXACT_BUDGET) {
      const match = scoped(anyOf(present));
      add(
        pool,
        (joined ? this.#matchingJoined.all(match, this.#scope) : this.#matching.all(match)) as Candidate[],
      );
      return;
    }
    if (rare.length > 0) {
      const match = scoped(anyOf(rare));
      const ranked = joined
        ? this.#rankedJoined.all(match, this.#scope, depth)
        : this.#ranked.all(match, depth);
      add(pool, ranked as Candidate[]);
    }
    if (feedback) {
      const originals = [...original].filter((term) => df(term) > 0);
      if (originals.length > 0) newest([anchor, originals]);
      return;
    }
    if (common.length === 0) return;
    const before = pool.size;
    const telling = present.filter((term) => df(term) * 10 <= rows);
    if (present.length >= 3 && telling.length >= 2) newest(telling.map((term) => [term]));
    const others = rare.length > 0 ? common : common.slice(1);
    if (others.length > 0) newest([anchor, others]);
    if (pool.size - before < depth) newest([common]);
  }

  /**
   * The adapter's cache of the partition's terms: a small partition (SCAN_TERMS) read whole in one pass and
   * kept (rows, term counts once pooled, each term's rows), a larger one counted term by term; exact, caught
   * up over the partition's inserts, else started afresh.
   */
  #documentFrequencies(whole: boolean, stats: Stats): (term: string) => number {
    let cache = this.#df;
    if (cache && cache.changes !== stats.changes) {
      const delta = stats.changes - cache.changes;
      const rows =
        delta > 0 && delta <= MAX_REPLAYED
          ? (this.#inserted.all(this.#scopeMatch, cache.maxSeq, delta + 1) as Array<[number, string, number]>)
          : [];
      if (rows.length === delta) {
        for (const row of rows) {
          if (cache.kept) keepRow(cache.kept, row);
          else {
            for (const term of new Set(row[1] ? row[1].split(' ') : [])) {
              const value = cache.df.get(term);
              if (value !== undefined) cache.df.set(term, value + 1);
            }
          }
        }
        cache.changes = stats.changes;
        cache.maxSeq = rows[rows.length - 1]![0];
      } else cache = undefined;
    }
    if (!cache || cache.df.size > MAX_CACHED_TERMS) {
      cache = {
        changes: stats.changes,
        maxSeq: (this.#maxSeq.get() as number | null) ?? 0,
        df: new Map(),
      };
      if (stats.terms <= SCAN_TERMS) {
        const kept: Kept = { rows: new Map(), postings: new Map() };
        for (const row of this.#partitionRows.all(this.#scopeMatch) as Array<[number, string, number]>)
          keepRow(kept, row);
        cache.kept = kept;
      }
      this.#df = cache;
    }
    const kept = cache.kept;
    if (kept) return (term) => kept.postings.get(term)?.length ?? 0;
    const memo = cache.df;
    return (term) => {
      let value = memo.get(term);
      if (value === undefined) {
        value = whole
          ? ((this.#vocab.get(term) as number | undefined) ?? 0)
          : (this.#count.get(
              `search_scope : ${quote(this.#scope)} AND search_terms : ${quote(term)}`,
            ) as number);
        memo.set(term, value);
      }
      return value;
    };
  }
}

interface Kept {
  rows: Map<number, { terms: string; length: number; tf?: ReadonlyMap<string, number> }>;
  postings: Map<string, number[]>;
}

function keepRow(kept: Kept, [seq, terms, length]: [number, string, number]): void {
  kept.rows.set(seq, { terms, length });
  for (const term of new Set(terms ? terms.split(' ') : [])) {
    const rows = kept.postings.get(term);
    if (rows) rows.push(seq);
    else kept.postings.set(term, [seq]);
  }
}

function add(pool: Map<number, Pooled>, candidates: readonly Candidate[]): void {
  for (const c of candidates) {
    if (!pool.has(c.seq)) pool.set(c.seq, { seq: c.seq, tf: termCounts(c.terms), length: c.length });
  }
}

const PG_COLUMNS =
  'user_id, agent_id, id, title, content, category, tags, metadata, provenance, created_at, updated_at';

/** As in the adapter (`packages/store-postgres/src/fact-search.ts`). */
const PG_EXACT_BUDGET = 1_000;
const PG_MATCH_BUDGET = 2_000;
const PG_FEEDBACK_BUDGET = 1_000;
const PG_SAMPLE_ROWS = 400;
const PG_PARTITION_SCAN_ROWS = 5_000;

/** One user's facts (no agent) in a schema set up by `@kioku/store-postgres`, through postgres.js alone. */
export class RawPostgresFacts {
  readonly #sql: Sql;
  readonly #schema: string;
  readonly #userId: string;

  constructor(sql: Sql, schema: string, userId: string) {
    this.#sql = sql;
    this.#schema = schema;
    this.#userId = userId;
  }

  /** The adapter's INSERT … ON CONFLICT DO NOTHING RETURNING id with the same values (core's analysis included). */
  async create(id: string, seed: FactSeed, now: string): Promise<void> {
    const sql = this.#sql;
    const { terms, length } = analyzed(seed);
    const rows = await sql`
      insert into ${sql(this.#schema)}.facts
        (user_id, agent_id, id, title, content, category, tags, tag_keys, metadata, provenance, created_at, updated_at,
         search_terms, search_length)
      values (${this.#userId}, '', ${id}, null, ${seed.content}, ${seed.category}, ${JSON.stringify(seed.tags)}::json,
        ${seed.tags.map((t) => t.toLowerCase())}::text[], '{}'::json, ${JSON.stringify({ source: 'user' })}::json,
        ${now}::timestamptz, ${now}::timestamptz, ${terms}, ${length})
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
   * The fact block's read (mode `all`): the first page newest-updated first (core's order: ties newest created, then id
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

  /**
   * The adapter's search step by step: the partition's statistics and the terms' document frequencies (one
   * statement), candidate rows (all matches when few; else the rarest terms' rows and samples of the rows holding
   * several terms), core's BM25+ with coverage, one feedback round, then the winners' rows by primary key.
   */
  async search(query: string, limit = 8): Promise<RawFact[]> {
    const sql = this.#sql;
    const weights = new Map<string, number>();
    for (const term of englishAnalyzer.terms(query)) weights.set(term, (weights.get(term) ?? 0) + 1);
    if (weights.size === 0) return [];
    const dfs = new Map<string, number>();
    const original = new Set(weights.keys());
    const pool = new Map<number, Pooled>();
    const ids = new Map<number, string>();
    // A partition of at most 1,000 facts is read whole beside the statistics and ranked from its own rows.
    const [whole, partition] = await Promise.all([
      sql<Array<{ seq: string; id: string; terms: string | null; length: number | null }>>`
        select seq, id, search_terms as terms, search_length as length from ${sql(this.#schema)}.facts
        where user_id = ${this.#userId} and agent_id = ''
          and (select n from ${sql(this.#schema)}.fact_counts where user_id = ${this.#userId} and agent_id = '') <= 1000`,
      this.#stats([...weights.keys()], dfs),
    ]);
    let stats = partition;
    if (whole.length > 0) {
      dfs.clear();
      stats = { rows: whole.length, terms: 0, changes: 0 };
      for (const r of whole) {
        const seq = Number(r.seq);
        ids.set(seq, r.id);
        add(pool, [{ seq, terms: r.terms ?? '', length: r.length ?? 0 }]);
        stats.terms += r.length ?? 0;
        for (const term of pool.get(seq)!.tf.keys()) dfs.set(term, (dfs.get(term) ?? 0) + 1);
      }
    }
    if (stats.rows === 0) return [];
    const df = (term: string) => dfs.get(term) ?? 0;
    const depth = Math.max(CANDIDATES, limit * 4);
    if (whole.length === 0) await this.#gather(weights, original, depth, df, pool, ids, stats.rows);
    let ranked = scoreCandidates(pool.values(), weights, original, stats, df);
    const top = ranked.slice(0, Math.max(limit, DEFAULT_FEEDBACK.docs));
    const unknown = feedbackTerms(top, weights).filter((term) => !dfs.has(term));
    if (unknown.length > 0 && whole.length === 0) await this.#stats(unknown, dfs);
    const expanded = expandQuery(top, weights, stats.rows, df);
    if (expanded) {
      if (whole.length === 0) await this.#gather(expanded, original, depth, df, pool, ids, stats.rows);
      ranked = scoreCandidates(pool.values(), expanded, original, stats, df);
    }
    const winners = ranked.slice(0, limit).map((r) => ids.get(r.seq)!);
    if (winners.length === 0) return [];
    const rows = await sql<RawFact[]>`
      select ${sql.unsafe(PG_COLUMNS)} from ${sql(this.#schema)}.facts
      where user_id = ${this.#userId} and agent_id = '' and id = any(${winners}::text[])`;
    const byId = new Map(rows.map((r) => [r.id, r]));
    return winners.flatMap((id) => byId.get(id) ?? []);
  }

  async #stats(terms: string[], dfs: Map<string, number>): Promise<Stats> {
    const sql = this.#sql;
    const rows = await sql<{ term: string | null; n: string; terms: string | null }[]>`
      select null as term, n, terms from ${sql(this.#schema)}.fact_counts where user_id = ${this.#userId} and agent_id = ''
      union all
      select term, df, null from ${sql(this.#schema)}.fact_terms
      where user_id = ${this.#userId} and agent_id = '' and term = any(${terms}::text[])`;
    const stats = { rows: 0, terms: 0, changes: 0 };
    for (const r of rows) {
      if (r.term === null) stats.rows = Number(r.n);
      else dfs.set(r.term, Number(r.n));
      if (r.terms !== null) stats.terms = Number(r.terms);
    }
    for (const term of terms) if (!dfs.has(term)) dfs.set(term, 0);
    return stats;
  }

  async #gather(
    weights: ReadonlyMap<string, number>,
    original: ReadonlySet<string>,
    depth: number,
    df: (term: string) => number,
    pool: Map<number, Pooled>,
    ids: Map<number, string>,
    rows: number,
  ): Promise<void> {
    const terms = termsByRarity(weights, original, df, {
      match: PG_MATCH_BUDGET,
      feedback: PG_FEEDBACK_BUDGET,
    });
    if (!terms) return;
    const { feedback, present, postings, rare, common, anchor } = terms;
    const small = rows <= PG_PARTITION_SCAN_ROWS;
    const put = (found: Array<{ seq: string; id: string; terms: string | null; length: number | null }>) => {
      for (const r of found) {
        const seq = Number(r.seq);
        ids.set(seq, r.id);
        add(pool, [{ seq, terms: r.terms ?? '', length: r.length ?? 0 }]);
      }
    };
    if (Math.min(postings, rows) <= PG_EXACT_BUDGET) {
      put(await this.#rows([present], small ? 'partition' : 'index', undefined));
      return;
    }
    const newest = (groups: string[][]) => this.#rows(groups, small ? 'partition' : 'sample', depth);
    // Side by side, as the adapter runs them.
    const sources: Array<ReturnType<typeof newest>> = [];
    if (rare.length > 0) sources.push(this.#rows([rare], small ? 'partition' : 'index', undefined));
    if (feedback || common.length === 0) {
      const originals = [...original].filter((term) => df(term) > 0);
      if (feedback && originals.length > 0) sources.push(newest([anchor, originals]));
      for (const found of await Promise.all(sources)) put(found);
      return;
    }
    const telling = present.filter((term) => df(term) * 10 <= rows);
    if (present.length >= 3 && telling.length >= 2) sources.push(newest(telling.map((term) => [term])));
    const others = rare.length > 0 ? common : common.slice(1);
    if (others.length > 0) sources.push(newest([anchor, others]));
    sources.push(newest([common]));
    const found = await Promise.all(sources);
    const filler = found.pop()!;
    if (rare.length > 0) put(found.shift()!);
    const before = pool.size;
    for (const r of found) put(r);
    if (pool.size - before < depth) put(filler);
  }

  /** The same three statement shapes as the adapter's `#rows`, without filters. */
  #rows(
    groups: readonly (readonly string[])[],
    how: 'index' | 'partition' | 'sample',
    limit: number | undefined,
  ) {
    const table = `"${this.#schema}".facts`;
    const holding = groups
      .map((_, i) => `string_to_array(search_terms, ' ') && $${i + 2}::text[]`)
      .join(' and ');
    const columns = 'seq, id, search_terms as terms, search_length as length, created_at';
    const newest = 'order by created_at desc, seq desc';
    const limited = limit === undefined ? '' : `${newest} limit $${groups.length + 2}`;
    const text = `with found as materialized (${
      how === 'partition'
        ? `select * from (select ${columns}, search_terms from ${table} where user_id = $1 and agent_id = '' offset 0) as part where ${holding}`
        : `select ${columns} from ${table} where user_id = $1 and agent_id = '' and ${holding}
           ${how === 'sample' ? `limit ${PG_SAMPLE_ROWS}` : ''}`
    }) select seq, id, terms, length from found ${limited}`;
    const values: unknown[] = [this.#userId, ...groups];
    if (limit !== undefined) values.push(limit);
    return this.#sql.unsafe(text, values as never[], { prepare: true }) as unknown as Promise<
      Array<{ seq: string; id: string; terms: string | null; length: number | null }>
    >;
  }
}
