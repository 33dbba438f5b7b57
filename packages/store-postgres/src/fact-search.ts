import {
  type RankCandidate as Candidate,
  expandQuery as expand,
  feedbackTerms,
  type LexicalIndex,
  type PartitionStats,
  type ScoredCandidate as Scored,
  scoreCandidates as score,
  termCounts,
  termsByRarity,
} from '@kioku/core/adapter';
import type { Sql } from 'postgres';
import { queryTerms } from './analysis.js';
import { FactIndexCache } from './fact-index-cache.js';
import { isoFromPg } from './timestamp.js';

/** Who searches, and which of their facts (category subtree, all of some tags) count. */
export interface FactSearchRequest {
  userId: string;
  agentId: string;
  category?: string | undefined;
  /** Lower-cased tags, every one required. */
  tags?: readonly string[] | undefined;
  limit: number;
}

export interface FactSearchHit {
  id: string;
  score: number;
}

export interface FactSearchResult {
  hits: FactSearchHit[];
  /** The partition's revision the hits were ranked at, when they come from this process's cached index. */
  revision?: string;
  /** The cached index moved on to `revision` from `from` by writes to `changed` only (FactIndexCache.advance). */
  advanced?: Advance;
}

/** Writes to `changed` only moved the partition from revision `from`; `stamps`: of those still there. */
export interface Advance {
  from: string;
  changed: readonly string[];
  stamps: ReadonlyMap<string, FactStamp>;
}

/** What tells one write of a fact from any other: its version and update time (ISO, as core writes it). */
export interface FactStamp {
  version: number;
  updatedAt: string;
}

interface CachedIndex {
  index: LexicalIndex;
  revision: string;
  advanced?: Advance;
}

/** Up to this many matching rows (summed document frequencies), every one is scored: core's exact ranking. */
const EXACT_BUDGET = 1_000;
/** Rows holding the query's rarest terms read and scored in full, at most (summed document frequencies). */
const MATCH_BUDGET = 2_000;
/** The feedback round's MATCH_BUDGET: its words weigh less, and its rows seldom reach the top. */
const FEEDBACK_BUDGET = 1_000;
/** Candidate rows each "rows holding …" source adds, at least (4× the limit when that is more). */
const DEPTH = 100;
/**
 * A "rows holding …" source of a large partition reads at most this many rows holding a term of every group,
 * as PostgreSQL finds them first (the GIN index intersects the groups' postings in about a millisecond; for
 * terms in most rows a plain scan finds them sooner), and the newest of them join the pool. On 1M facts in
 * one partition (the store bench's corpus and 30 queries), against walking the newest 20,000 rows for each
 * source: search p50/p95 about halved, and the top 8 closer to core's exhaustive ranking (96.0 % of its score
 * mass, was 91.9 %; 46 % of its ids, was 30 %): core breaks ties by age, so the newest rows are no better a
 * guess than the first found.
 */
const SAMPLE_ROWS = 400;
/**
 * A partition this small is ranked in memory from a cached index (FactIndexCache): measured with `pnpm
 * bench:load`, reading a 1,000-fact partition's terms for every search was a turn's costliest statement.
 */
const CACHED_PARTITION_ROWS = 20_000;
/** Facts the cache holds at most per store (about 150 bytes each: 200,000 is ~30 MB). */
export const FACT_INDEX_CACHE_DEFAULT = 200_000;
/** A partition this small is read through its own index (not the GIN index, whose postings span all users). */
const PARTITION_SCAN_ROWS = 5_000;

/** The statistics row that carries the partition's revision. */
const REVISION = ' revision';

/** The analysed terms of a row, as the GIN index `facts_terms_idx` indexes them. */
const TERMS = `string_to_array(search_terms, ' ')`;

interface Row {
  seq: string | number;
  id: string;
  terms: string | null;
  length: number | null;
}

interface Pooled extends Candidate {
  id: string;
}

/**
 * core's lexical ranking of one partition's facts on PostgreSQL (see `ranking.ts`). A partition of at most
 * CACHED_PARTITION_ROWS facts is ranked by core's LexicalIndex over its terms, kept per process while its
 * revision is unchanged (FactIndexCache): one statement per search, which reads the rows again only after a
 * write. A larger one (or a filtered search) is ranked with statistics kept by triggers
 * (`fact_counts.terms`, `fact_terms.df`; migration 0008) over candidates found through the GIN index on
 * `search_terms`. Which rows are scored there:
 * - when the query's terms are in at most EXACT_BUDGET facts (summed document frequencies), or the partition
 *   holds no more, all of them: core's ranking exactly (LoCoMo's partitions, and most searches);
 * - otherwise the rows of the rarest terms (within MATCH_BUDGET), and from samples of SAMPLE_ROWS rows: the
 *   newest rows holding every term that tells rows apart (in at most a tenth of the partition), the newest
 *   holding a rare term and another (covering more of the query multiplies the score), and when that is short
 *   the newest holding a common one.
 * The feedback round adds the rows of its new terms the same way; the pool is then scored again, whole.
 * Every statement is prepared once per connection and shape (number of groups, filters).
 */
export class FactSearch {
  readonly #client: Sql;
  readonly #table: string;
  readonly #counts: string;
  readonly #terms: string;
  readonly #texts = new Map<string, string>();
  readonly #revisions: string;
  /** The last ranking of a large partition, whole, with the partition's revision it was ranked at. */
  #last: { key: string; revision: string; ranked: FactSearchHit[] } | undefined;
  readonly #cache: FactIndexCache;
  readonly #schema: string;

  constructor(client: Sql, schema: string, cacheFacts = FACT_INDEX_CACHE_DEFAULT) {
    this.#client = client;
    this.#schema = schema;
    this.#cache = new FactIndexCache(cacheFacts);
    this.#table = `"${schema}"."facts"`;
    this.#counts = `"${schema}"."fact_counts"`;
    this.#terms = `"${schema}"."fact_terms"`;
    // A partition's revision (`FactStore.revision`); without a row, minus the sequence's position, which any
    // write anywhere moves on.
    this.#revisions = `select coalesce(r.revision, -q.last_value)::text as revision
      from "${schema}"."fact_revision_seq" as q
      left join "${schema}"."fact_revisions" as r on r.user_id = $1 and r.agent_id = $2`;
  }

  /**
   * The partition's best `limit` facts for `query`. The same query searched again with no write to the
   * partition in between (fact recall and relevant memory both search the user message every turn) is
   * answered from the last ranking after one statement that reads the partition's revision: the ranking does
   * not depend on the limit (the candidate depth is the same up to a limit of 25, and the feedback round reads
   * the best five), so it is what searching again would rank.
   */
  async search(request: FactSearchRequest, query: string): Promise<FactSearchResult> {
    const weights = queryTerms(query);
    if (weights.size === 0) return { hits: [] };
    const depth = Math.max(DEPTH, request.limit * 4);
    const key = JSON.stringify([
      request.userId,
      request.agentId,
      request.category ?? null,
      request.tags ?? null,
      depth,
      [...weights],
    ]);
    const unfiltered = request.category === undefined && !request.tags?.length;
    if (unfiltered && this.#cache.capacity > 0) {
      const cached = await this.#cachedIndex(request);
      if (cached)
        return {
          hits: cached.index.search(query, { limit: request.limit }),
          revision: cached.revision,
          ...(cached.advanced && { advanced: cached.advanced }),
        };
    }
    const last = this.#last;
    if (last?.key === key && (await this.#revision(request)) === last.revision) {
      return { hits: last.ranked.slice(0, request.limit) };
    }
    const dfs = new Map<string, number>();
    const stats = await this.#stats(request, [...weights.keys()], dfs);
    if (stats.rows === 0) return { hits: [] };
    const df = (term: string) => dfs.get(term) ?? 0;
    const original = new Set(weights.keys());
    const pool = new Map<number, Pooled>();
    await this.#gather(request, weights, original, depth, df, pool, stats.rows);
    let ranked = score(pool.values(), weights, original, stats, df);
    const top = ranked.slice(0, Math.max(request.limit, 5));
    const unknown = feedbackTerms(top, weights).filter((term) => !dfs.has(term));
    // The statements after the first statistics run later: a write between them moves the revision on.
    const again = unknown.length > 0 ? await this.#stats(request, unknown, dfs) : stats;
    const expanded = expand(top, weights, stats.rows, df);
    if (expanded) {
      await this.#gather(request, expanded, original, depth, df, pool, stats.rows);
      ranked = score(pool.values(), expanded, original, stats, df);
    }
    const hits = ranked.map((r) => ({ id: (r as Scored & Pooled).id, score: r.score }));
    // Kept only when every statement after the first statistics saw that revision: a reuse checks it again.
    this.#last =
      again.revision === stats.revision ? { key, revision: stats.revision, ranked: hits } : undefined;
    return { hits: hits.slice(0, request.limit) };
  }

  async #revision(request: FactSearchRequest): Promise<string> {
    const rows = (await this.#client.unsafe(this.#revisions, [request.userId, request.agentId], {
      prepare: true,
    })) as unknown as Array<{ revision: string }>;
    return rows[0]!.revision;
  }

  async #gather(
    request: FactSearchRequest,
    weights: ReadonlyMap<string, number>,
    original: ReadonlySet<string>,
    depth: number,
    df: (term: string) => number,
    pool: Map<number, Pooled>,
    rows: number,
  ): Promise<void> {
    const terms = termsByRarity(weights, original, df, { match: MATCH_BUDGET, feedback: FEEDBACK_BUDGET });
    if (!terms) return;
    const { feedback, present, postings, rare, common, anchor } = terms;
    const small = rows <= PARTITION_SCAN_ROWS;
    if (Math.min(postings, rows) <= EXACT_BUDGET) {
      add(pool, await this.#rows(request, [present], small ? 'partition' : 'index', undefined));
      return;
    }
    const newest = (groups: string[][]) => this.#rows(request, groups, small ? 'partition' : 'sample', depth);
    // The sources are independent: their statements run side by side (postgres.js pipelines them over the
    // pool), then their rows join the pool in this order.
    const sources: Array<Promise<Row[]>> = [];
    if (rare.length > 0) sources.push(this.#rows(request, [rare], small ? 'partition' : 'index', undefined));
    if (feedback) {
      const originals = [...original].filter((term) => df(term) > 0);
      if (originals.length > 0) sources.push(newest([anchor, originals]));
      for (const rows of await Promise.all(sources)) add(pool, rows);
      return;
    }
    if (common.length === 0) {
      for (const rows of await Promise.all(sources)) add(pool, rows);
      return;
    }
    const telling = present.filter((term) => df(term) * 10 <= rows);
    if (present.length >= 3 && telling.length >= 2) sources.push(newest(telling.map((term) => [term])));
    const others = rare.length > 0 ? common : common.slice(1);
    if (others.length > 0) sources.push(newest([anchor, others]));
    // Last, the newest facts holding a common term: they fill in when the others bring fewer than `depth`.
    sources.push(newest([common]));
    const found = await Promise.all(sources);
    const filler = found.pop()!;
    if (rare.length > 0) add(pool, found.shift()!);
    const before = pool.size;
    for (const rows of found) add(pool, rows);
    if (pool.size - before < depth) add(pool, filler);
  }

  /**
   * The partition's index from this process's cache, after one statement that reads its revision and, when
   * the cache does not hold that revision, the terms of the rows written since the revision it holds (from
   * `fact_revisions.changes`, see migration 0014), or of every row when those writes are not all listed
   * there (from one snapshot); undefined for a partition of more than CACHED_PARTITION_ROWS facts (searched
   * in SQL). A turn records an exchange as a fact, so the next turn's search would otherwise read and index
   * the whole partition again (bench:turn at 1,000 facts: ~11 ms of a 29 ms turn's CPU). The conditions on
   * the revision and the size are scalar subqueries, which PostgreSQL checks once before it reads a row (a
   * one-time filter). As a join (`from facts, v, c where v.revision <> $3`), the prepared statement's
   * generic plan could read every row of the partition and test each (0.59 ms a call on 1,000 facts, 0.07
   * ms this way).
   */
  async #cachedIndex(request: FactSearchRequest, whole = false): Promise<CachedIndex | undefined> {
    const key = `${request.userId}\u0000${request.agentId}`;
    const text = this.#text(
      'cached',
      () => `with v as (select coalesce(r.revision, -q.last_value)::text as revision, r.changes
          from "${this.#schema}"."fact_revision_seq" as q
          left join "${this.#schema}"."fact_revisions" as r on r.user_id = $1 and r.agent_id = $2),
        c as (select coalesce((select n from ${this.#counts} where user_id = $1 and agent_id = $2), 0) as n),
        e as (select x.o, x.e from v, jsonb_array_elements(case when v.revision <> $3 then v.changes end)
          with ordinality as x(e, o)),
        b as (select min(o) as o from e where e.e->>'r' = $3),
        d as (select case when (select o from b) is not null
            and not exists (select from e where e.o > (select o from b) and jsonb_typeof(e.e->'ids') <> 'array')
          then coalesce((select array_agg(distinct i) from e, jsonb_array_elements_text(e.e->'ids') as i
            where e.o > (select o from b)), '{}'::text[]) end as ids)
        select v.revision, c.n, d.ids as changed, null::bigint as seq, null::text as id, null::text as terms,
          null::int as length, null::int as version, null::text as updated
        from v, c, d
        union all
        select null, null, null, f.seq, f.id, f.search_terms, f.search_length, null, null from ${this.#table} as f
        where f.user_id = $1 and f.agent_id = $2 and (select v.revision <> $3 from v)
          and (select c.n <= ${CACHED_PARTITION_ROWS} from c) and (select d.ids is null from d)
        union all
        select null, null, null, f.seq, f.id, f.search_terms, f.search_length, f.version, f.updated_at::text
        from ${this.#table} as f
        where f.user_id = $1 and f.agent_id = $2 and f.id = any((select d.ids from d)::text[])
          and (select cardinality(d.ids) > 0 from d) and (select c.n <= ${CACHED_PARTITION_ROWS} from c)`,
    );
    const from = whole ? '' : this.#cache.revisionOf(key);
    const rows = (await this.#client.unsafe(text, [request.userId, request.agentId, from], {
      prepare: true,
    })) as unknown as Array<
      {
        revision: string | null;
        n: string | null;
        changed: string[] | null;
        version: number | null;
        updated: string | null;
      } & Row
    >;
    const head = rows.find((r) => r.revision !== null)!;
    const revision = head.revision!;
    const cached = this.#cache.get(key, revision);
    if (cached) return { index: cached, revision };
    if (Number(head.n) > CACHED_PARTITION_ROWS) return undefined;
    const facts = rows.filter((r) => r.revision === null).sort((a, b) => Number(a.seq) - Number(b.seq));
    if (head.changed !== null) {
      const changed = head.changed;
      const index = this.#cache.advance(key, from, revision, changed, facts);
      // Not advanced (a deletion, or another search moved the index on meanwhile): read it whole.
      if (!index) return this.#cachedIndex(request, true);
      const stamps = new Map(
        facts.map((f) => [f.id, { version: f.version!, updatedAt: isoFromPg(f.updated!) }]),
      );
      return { index, revision, advanced: { from, changed, stamps } };
    }
    return { index: this.#cache.put(key, revision, facts), revision };
  }

  /** The partition's size and the document frequencies of `terms` (into `dfs`), in one statement. */
  async #stats(
    request: FactSearchRequest,
    terms: string[],
    dfs: Map<string, number>,
  ): Promise<PartitionStats & { revision: string }> {
    // With the partition's revision, in the same snapshot (REVISION is no analysed term: those hold no space).
    const text = this.#text(
      'stats',
      () => `select null as term, n, terms from ${this.#counts} where user_id = $1 and agent_id = $2
        union all
        select term, df, null from ${this.#terms} where user_id = $1 and agent_id = $2 and term = any($3::text[])
        union all
        select '${REVISION}', revision::bigint, null from (${this.#revisions}) as v`,
    );
    const rows = (await this.#client.unsafe(text, [request.userId, request.agentId, terms], {
      prepare: true,
    })) as unknown as Array<{ term: string | null; n: string; terms: string | null }>;
    const stats = { rows: 0, terms: 0, revision: '' };
    for (const r of rows) {
      if (r.term === null) stats.rows = Number(r.n);
      else if (r.term === REVISION) stats.revision = String(r.n);
      else dfs.set(r.term, Number(r.n));
      if (r.terms !== null) stats.terms = Number(r.terms);
    }
    for (const term of terms) if (!dfs.has(term)) dfs.set(term, 0);
    return stats;
  }

  /**
   * The partition's rows holding a term of every group (and passing the filters): all of them, or the newest
   * `limit` when given. `how` picks the path: `index` reads the GIN index (a materialized CTE, so PostgreSQL
   * cannot trade it for a newest-first walk that would look at every row); `partition` reads the partition
   * through its btree index; `sample` reads the first SAMPLE_ROWS such rows PostgreSQL finds.
   */
  async #rows(
    request: FactSearchRequest,
    groups: readonly (readonly string[])[],
    how: 'index' | 'partition' | 'sample',
    limit: number | undefined,
  ): Promise<Row[]> {
    const category = request.category !== undefined;
    const tags = (request.tags?.length ?? 0) > 0;
    const key = `${how}:${groups.length}:${limit === undefined ? '' : 'l'}${category ? 'c' : ''}${tags ? 't' : ''}`;
    const text = this.#text(key, () => {
      let n = 2;
      const filters = [`user_id = $1`, `agent_id = $2`];
      if (category) filters.push(`(category = $${++n} or starts_with(category, $${++n}))`);
      if (tags) filters.push(`tag_keys @> $${++n}::text[]`);
      const holding = groups.map(() => `${TERMS} && $${++n}::text[]`);
      const columns = 'seq, id, search_terms as terms, search_length as length, created_at';
      const newest = 'order by created_at desc, seq desc';
      const limited = limit === undefined ? '' : `${newest} limit $${++n}`;
      const found =
        how !== 'partition'
          ? `select ${columns} from ${this.#table} where ${[...filters, ...holding].join(' and ')}
             ${how === 'sample' ? `limit ${SAMPLE_ROWS}` : ''}`
          : `select * from (select ${columns}, search_terms from ${this.#table} where ${filters.join(' and ')} offset 0) as part
             where ${holding.join(' and ')}`;
      return `with found as materialized (${found}) select seq, id, terms, length from found ${limited}`;
    });
    const values: unknown[] = [request.userId, request.agentId];
    if (category) values.push(request.category, `${request.category}/`);
    if (tags) values.push(request.tags);
    for (const g of groups) values.push(g);
    if (limit !== undefined) values.push(limit);
    return (await this.#client.unsafe(text, values as never[], { prepare: true })) as unknown as Row[];
  }

  #text(key: string, build: () => string): string {
    let text = this.#texts.get(key);
    if (text === undefined) {
      text = build();
      this.#texts.set(key, text);
    }
    return text;
  }
}

/** A restore of at least this many facts vacuums its tables after it commits (see below). */
export const VACUUM_AFTER_ROWS = 10_000;

/**
 * After a bulk write, as soon as it has committed, vacuums and analyses what search reads. Best effort: the data
 * is already stored and correct, and autovacuum would get there later, so a failure here is not the caller's.
 * - `fact_terms`: the bulk write updates each of its terms' rows once per INSERT statement, all in one
 *   transaction: 1M facts restored leave ~570,000 dead row versions beside ~2,500 live ones, and until
 *   autovacuum reaches them every search's document-frequency look-up walks them (bench:store at 1M: search
 *   p50 36 ms, 15 ms once vacuumed).
 * - `facts`: until it is analysed the planner has no statistics (it guessed one row for a partition of 100k and
 *   read it through a btree index, testing every row, instead of the GIN index), and until it is vacuumed every restored fact is still in the
 *   GIN index's pending list, which every search scans. 100k facts restored: a search took 400–700 ms, 15–80 ms
 *   after both (bench:turn at 100k facts, every feature on: turn p50 1.75 s → 68 ms).
 */
export async function vacuumAfterBulkWrite(client: Sql, schema: string): Promise<void> {
  await client
    .unsafe(`vacuum (analyze) "${schema}"."fact_terms", "${schema}"."facts"`)
    .catch(() => undefined);
}

const pooled = (r: Row): Pooled => ({
  seq: Number(r.seq),
  id: r.id,
  tf: termCounts(r.terms ?? ''),
  length: r.length ?? 0,
});

/** Rows not in the pool yet join it; a row several sources found has its terms counted once. */
function add(pool: Map<number, Pooled>, rows: readonly Row[]): void {
  for (const row of rows) {
    const seq = Number(row.seq);
    if (!pool.has(seq)) pool.set(seq, pooled(row));
  }
}
