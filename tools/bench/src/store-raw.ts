/**
 * The raw-driver equivalents of what the SQL fact stores do for `create`, `get` and `search`, so the store
 * bench can put each adapter's figure beside the same work done by hand: the same SQL statements with the
 * same values, issued directly with postgres.js (tagged templates and `unsafe(…, { prepare: true })`). What the adapters add on top — input validation (zod), drizzle building
 * the SQL on every call, the transaction around each operation, mapping rows to `Fact`s, error mapping — is
 * what the overhead ratio measures.
 *
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
import type { Sql } from 'postgres';
import type { FactSeed } from './facts.js';

export interface RawFact {
  id: string;
  content: string;
  tags: string[];
  metadata: Record<string, unknown>;
  provenance: Record<string, unknown>;
}

/** core's English analysis of a fact: what the PostgreSQL adapter stores in `search_terms`. */
function analyzed(seed: FactSeed): { terms: string; length: number } {
  const terms = englishAnalyzer.terms(factSearchText(seed));
  return { terms: terms.join(' '), length: terms.length };
}

interface Candidate {
  seq: number;
  terms: string;
  length: number;
}

type Pooled = RankCandidate;

interface Stats {
  rows: number;
  terms: number;
  changes: number;
}

const CANDIDATES = 100;

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
