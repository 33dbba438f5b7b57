import { ConflictError, type Fact, type Scope } from '@kioku/core';
import {
  checkFactVersion,
  isoAt,
  makeEnvelope,
  missingFactError,
  newFact,
  parseOrThrow,
  parseScope,
  parseWriteOptions,
} from '@kioku/core/adapter';
import {
  type CategoryCount,
  type ErasureResidue,
  type FactFilter,
  FactFilterSchema,
  type FactHit,
  type FactInput,
  FactInputSchema,
  type FactListOptions,
  FactListOptionsSchema,
  type FactPatch,
  FactPatchSchema,
  type FactQuery,
  FactQuerySchema,
  FactSchema,
  type FactStore,
  IdSchema,
  type RestoreOptions,
  type RestoreReport,
  type SnapshotEnvelope,
  type SnapshotSelector,
  type WriteOptions,
} from '@kioku/core/store';
import { and, asc, count, desc, eq, getTableColumns, lte, type SQL, sql } from 'drizzle-orm';
import { analyzeFact } from './analysis.js';
import type { Db } from './database.js';
import { FactRowCache } from './fact-row-cache.js';
import {
  FACT_INDEX_CACHE_DEFAULT,
  FactSearch,
  VACUUM_AFTER_ROWS,
  vacuumAfterBulkWrite,
} from './fact-search.js';
import { readRevision } from './revision.js';
import { groupByPartition, parseSnapshot, selectedUser } from './snapshot.js';
import {
  agentField,
  agentKey,
  batches,
  hasAllTags,
  maxRowsPerInsert,
  tagKeys,
  tagsCanMatch,
  underPrefix,
} from './sql.js';
import { PostgresStore, type PostgresStoreOptions } from './store.js';

export interface PostgresFactStoreOptions extends PostgresStoreOptions {
  /**
   * Facts this process keeps as in-memory search indexes of small partitions (see `FactIndexCache`;
   * default 200,000, ~30 MB), and a quarter as many of the records those searches returned
   * (`FactRowCache`, ~25 MB); 0 turns both off (every search ranks in SQL and reads its records).
   */
  searchCacheFacts?: number;
}

/** FactStore on PostgreSQL: one row per fact in `facts`, partitioned by `(user_id, agent_id)`. */
export class PostgresFactStore extends PostgresStore implements FactStore {
  /**
   * `get`, `create`, and the unfiltered `list({ order: 'updated' })` page and `count` that core's fact
   * block (mode `all`) runs every turn, built once and run as prepared statements (postgres.js prepares each once per
   * connection): drizzle's default is an unnamed statement, parsed and planned in an extra round trip on
   * every call, which cost more than the query itself. A client opened with `prepare: false` (PgBouncer in
   * transaction mode) still gets unnamed statements.
   */
  #prepared: ReturnType<PostgresFactStore['buildStatements']> | undefined;
  #search: FactSearch | undefined;
  readonly #searchCacheFacts: number;
  readonly #rows: FactRowCache;

  constructor(options: PostgresFactStoreOptions) {
    super(options);
    this.#searchCacheFacts = options.searchCacheFacts ?? FACT_INDEX_CACHE_DEFAULT;
    // Records weigh more than the index's terms: a quarter as many (~25 MB at the default).
    this.#rows = new FactRowCache(Math.floor(this.#searchCacheFacts / 4));
  }

  private buildStatements() {
    const t = this.tables.facts;
    const c = this.tables.factCounts;
    const p = sql.placeholder;
    const db = this.database.db;
    const partition = and(eq(t.userId, p('userId')), eq(t.agentId, p('agentId')));
    return {
      get: db
        .select(this.#columns)
        .from(t)
        .where(and(eq(t.userId, p('userId')), eq(t.agentId, p('agentId')), eq(t.id, p('id'))))
        .prepare('kioku_facts_get'),
      insert: db
        .insert(t)
        .values({
          userId: p('userId'),
          agentId: p('agentId'),
          id: p('id'),
          title: p('title'),
          content: p('content'),
          category: p('category'),
          tags: p('tags'),
          tagKeys: p('tagKeys'),
          metadata: p('metadata'),
          provenance: p('provenance'),
          eventTime: p('eventTime'),
          createdAt: p('createdAt'),
          updatedAt: p('updatedAt'),
          version: p('version'),
          searchTerms: p('searchTerms'),
          searchLength: p('searchLength'),
        })
        .onConflictDoNothing()
        .returning({ id: t.id })
        .prepare('kioku_facts_insert'),
      // `limit` null is LIMIT NULL: no limit.
      listUpdated: db
        .select(this.#columns)
        .from(t)
        .where(partition)
        .orderBy(...this.#updatedOrder)
        .limit(p('limit'))
        .offset(p('offset'))
        .prepare('kioku_facts_list_updated'),
      // `fact_counts` is kept by triggers on `facts` (migration 0002); no row means no facts.
      count: db
        .select({ n: c.n })
        .from(c)
        .where(and(eq(c.userId, p('userId')), eq(c.agentId, p('agentId'))))
        .prepare('kioku_facts_count'),
      byIds: db
        .select(this.#columns)
        .from(t)
        .where(and(partition, sql`${t.id} = any(${p('ids')}::text[])`))
        .prepare('kioku_facts_by_ids'),
    };
  }

  get #statements() {
    this.#prepared ??= this.buildStatements();
    return this.#prepared;
  }

  async get(scope: Scope, id: string): Promise<Fact | null> {
    const s = parseScope(scope);
    parseOrThrow(IdSchema, id, 'fact id');
    const rows = await this.database.run(() =>
      this.#statements.get.execute({ userId: s.userId, agentId: agentKey(s.agentId), id }),
    );
    return rows[0] ? toFact(rows[0]) : null;
  }

  async list(scope: Scope, options: FactListOptions = {}): Promise<Fact[]> {
    const s = parseScope(scope);
    const opts = parseOrThrow(FactListOptionsSchema, options, 'list options');
    const t = this.tables.facts;
    const unfiltered = opts.category === undefined && !opts.tags?.length;
    if (opts.order === 'updated' && unfiltered) {
      const rows = await this.database.run(() =>
        this.#statements.listUpdated.execute({
          userId: s.userId,
          agentId: agentKey(s.agentId),
          limit: opts.limit ?? null,
          offset: opts.offset,
        }),
      );
      return rows.map(toFact);
    }
    // Creation order; ties keep insertion order (and reverse with it for `newest`), as core's stable sort.
    const order =
      opts.order === 'updated'
        ? this.#updatedOrder
        : opts.order === 'newest'
          ? [desc(t.createdAt), desc(t.seq)]
          : [asc(t.createdAt), asc(t.seq)];
    const rows = await this.database.run((db) => {
      const query = db
        .select(this.#columns)
        .from(t)
        .where(this.#filters(s, opts.category, opts.tags))
        .orderBy(...order)
        .offset(opts.offset);
      return opts.limit === undefined ? query : query.limit(opts.limit);
    });
    return rows.map(toFact);
  }

  /** See `readRevision` (migration 0011). */
  async revision(scope: Scope): Promise<string> {
    return readRevision(this.database, 'fact', parseScope(scope));
  }

  async count(scope: Scope, filter: FactFilter = {}): Promise<number> {
    const s = parseScope(scope);
    const f = parseOrThrow(FactFilterSchema, filter, 'count filter');
    const t = this.tables.facts;
    const rows = await this.database.run((db) =>
      f.category === undefined && !f.tags?.length
        ? this.#statements.count.execute({ userId: s.userId, agentId: agentKey(s.agentId) })
        : db
            .select({ n: count() })
            .from(t)
            .where(this.#filters(s, f.category, f.tags)),
    );
    return rows[0]?.n ?? 0;
  }

  async create(scope: Scope, input: FactInput): Promise<Fact> {
    const s = parseScope(scope);
    // Validated input and scope, a generated id, the clock's ISO time and version 1 (core's `newFact`):
    // nothing to validate again (a second FactSchema pass cost ~10 µs of a create).
    const fact = newFact(s, parseOrThrow(FactInputSchema, input, 'fact'), isoAt(this.clock));
    // The primary key decides between concurrent creates of one id: exactly one insert wins.
    const inserted = await this.database.run(() => this.#statements.insert.execute(toRow(fact)));
    if (inserted.length === 0) throw new ConflictError(`A fact with id "${fact.id}" already exists.`);
    this.#rows.wrote(partitionKey(s), fact);
    return fact;
  }

  async update(scope: Scope, id: string, patch: FactPatch, options?: WriteOptions): Promise<Fact> {
    const s = parseScope(scope);
    parseOrThrow(IdSchema, id, 'fact id');
    const { title, tags, ...rest } = parseOrThrow(FactPatchSchema, patch, 'fact update');
    const { expectedVersion } = parseWriteOptions(options);
    const t = this.tables.facts;
    // One UPDATE of only the given fields (the search vector is a generated column and follows) that counts
    // one more version; with an expected version it applies only to a row still at that version, so a
    // stale write changes nothing whichever process made the newer one.
    const set = {
      ...Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)),
      ...(title === undefined ? {} : { title }),
      ...(tags === undefined ? {} : { tags, tagKeys: tagKeys(tags) }),
      updatedAt: isoAt(this.clock),
      version: sql`${t.version} + 1`,
    };
    // A changed text is analysed again in the same transaction (the row stays locked from the first UPDATE),
    // so `search_terms` always matches the text whoever writes next.
    const reanalyse =
      title !== undefined || tags !== undefined || rest.content !== undefined || rest.category !== undefined;
    for (;;) {
      const write = async (db: Db) => {
        const [updated] = await db
          .update(t)
          .set(set)
          .where(and(this.#partition(s), eq(t.id, id), this.#atVersion(expectedVersion)))
          .returning(this.#columns);
        if (updated && reanalyse) {
          await db
            .update(t)
            .set(analyzeFact({ ...updated, title: updated.title ?? undefined }))
            .where(and(this.#partition(s), eq(t.id, id)));
        }
        return updated;
      };
      const row = await (reanalyse ? this.database.transaction(write) : this.database.run(write));
      if (row) {
        const fact = toFact(row);
        this.#rows.wrote(partitionKey(s), fact);
        return fact;
      }
      if (expectedVersion === undefined) throw missingFactError(id);
      // Nothing updated: the fact is missing, or at another version (CONFLICT with the version it is at).
      const version = await this.#versionOf(s, id);
      if (version === undefined) throw missingFactError(id);
      checkFactVersion({ id, version }, expectedVersion);
      // Back at the expected version since the UPDATE (deleted and created again): try again.
    }
  }

  async delete(scope: Scope, id: string, options?: WriteOptions): Promise<boolean> {
    const s = parseScope(scope);
    parseOrThrow(IdSchema, id, 'fact id');
    const { expectedVersion } = parseWriteOptions(options);
    const t = this.tables.facts;
    for (;;) {
      const rows = await this.database.run((db) =>
        db
          .delete(t)
          .where(and(this.#partition(s), eq(t.id, id), this.#atVersion(expectedVersion)))
          .returning({ id: t.id }),
      );
      if (rows.length > 0) return true;
      if (expectedVersion === undefined) return false;
      const version = await this.#versionOf(s, id);
      if (version === undefined) return false;
      checkFactVersion({ id, version }, expectedVersion);
    }
  }

  /** `version = expected` when a write expects one (core keeps versions within the integer column). */
  #atVersion(expectedVersion: number | undefined): SQL | undefined {
    return expectedVersion === undefined ? undefined : sql`${this.tables.facts.version} = ${expectedVersion}`;
  }

  /** The stored fact's version, undefined when there is no such fact: read only after a refused write. */
  async #versionOf(scope: Scope, id: string): Promise<number | undefined> {
    const t = this.tables.facts;
    const rows = await this.database.run((db) =>
      db
        .select({ version: t.version })
        .from(t)
        .where(and(this.#partition(scope), eq(t.id, id))),
    );
    return rows[0]?.version;
  }

  async search(scope: Scope, query: FactQuery): Promise<FactHit[]> {
    const s = parseScope(scope);
    const q = parseOrThrow(FactQuerySchema, query, 'fact query');
    const t = this.tables.facts;
    if (!q.query?.trim()) {
      // Recall's first-turn fallback: the most recently updated facts.
      const rows = await this.database.run((db) =>
        db
          .select(this.#columns)
          .from(t)
          .where(this.#filters(s, q.category, q.tags))
          .orderBy(desc(t.updatedAt), asc(t.seq))
          .limit(q.limit),
      );
      return rows.map((row) => ({ fact: toFact(row), score: 0 }));
    }
    const tags = q.tags?.length ? q.tags : undefined;
    if (tags && !tagsCanMatch(tags)) return [];
    const request = {
      userId: s.userId,
      agentId: agentKey(s.agentId),
      category: q.category,
      tags: tags && tagKeys(tags),
      limit: q.limit,
    };
    return this.database.run(async () => {
      this.#search ??= new FactSearch(this.database.client, this.database.schema, this.#searchCacheFacts);
      const { hits, revision, advanced } = await this.#search.search(request, q.query!);
      if (advanced && revision !== undefined) {
        const key = partitionKey(request);
        this.#rows.advance(key, advanced.from, revision, advanced.changed, advanced.stamps);
      }
      if (hits.length === 0) return [];
      const byId = await this.#byIds(
        request,
        hits.map((h) => h.id),
        revision,
      );
      return hits.flatMap(({ id, score }) => {
        const fact = byId.get(id);
        // A fact deleted between ranking and reading is left out.
        return fact ? [{ fact, score }] : [];
      });
    });
  }

  /**
   * The facts of `ids` in the partition; with the `revision` the ids were ranked at, those read before at
   * that revision come from this process's FactRowCache and only the others are read.
   */
  async #byIds(
    request: { userId: string; agentId: string },
    ids: string[],
    revision: string | undefined,
  ): Promise<Map<string, Fact>> {
    const read = async (wanted: string[]) =>
      (await this.#statements.byIds.execute({ ...request, ids: wanted })).map(toFact);
    if (revision === undefined) return new Map((await read(ids)).map((f) => [f.id, f]));
    const key = partitionKey(request);
    const { found, missing } = this.#rows.get(key, revision, ids);
    if (missing.length > 0) {
      const facts = await read(missing);
      this.#rows.put(key, revision, facts);
      for (const fact of facts) found.set(fact.id, fact);
    }
    return found;
  }

  async categories(scope: Scope): Promise<CategoryCount[]> {
    const s = parseScope(scope);
    const t = this.tables.facts;
    const rows = await this.database.run((db) =>
      db
        .select({ category: t.category, count: count() })
        .from(t)
        .where(this.#partition(s))
        .groupBy(t.category),
    );
    // Sorted like core (localeCompare), not by the database's collation.
    return rows.sort((a, b) => a.category.localeCompare(b.category));
  }

  /**
   * One transaction: the facts (the triggers take their statistics rows with them, migration 0010), then
   * any statistics row of the user still there at 0 (left by a schema older than 0010), then her revision
   * rows (the triggers have just replaced them; the sequence never hands their values out again).
   */
  async eraseUser(userId: string): Promise<string[]> {
    selectedUser({ userId });
    const { facts: t, factTerms, factCounts, factRevisions } = this.tables;
    const rows = await this.database.transaction(async (tx) => {
      const deleted = await tx.delete(t).where(eq(t.userId, userId)).returning({ id: t.id });
      await tx.delete(factTerms).where(and(eq(factTerms.userId, userId), lte(factTerms.df, 0)));
      await tx.delete(factCounts).where(and(eq(factCounts.userId, userId), lte(factCounts.n, 0)));
      await tx.delete(factRevisions).where(eq(factRevisions.userId, userId));
      return deleted;
    });
    return rows.map((r) => r.id);
  }

  /** The tables the triggers derive from `facts`: rows of the user are residue once she has none. */
  async erasureResidue(userId: string): Promise<ErasureResidue[]> {
    selectedUser({ userId });
    const { factTerms, factCounts, factRevisions } = this.tables;
    return this.database.run(async (db) => {
      const [terms] = await db.select({ n: count() }).from(factTerms).where(eq(factTerms.userId, userId));
      const [counts] = await db.select({ n: count() }).from(factCounts).where(eq(factCounts.userId, userId));
      const [revisions] = await db
        .select({ n: count() })
        .from(factRevisions)
        .where(eq(factRevisions.userId, userId));
      return [
        { place: 'fact_terms', count: terms?.n ?? 0 },
        { place: 'fact_counts', count: counts?.n ?? 0 },
        { place: 'fact_revisions', count: revisions?.n ?? 0 },
      ];
    });
  }

  async snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<Fact>> {
    const { parsed, userId } = selectedUser(selector);
    const t = this.tables.facts;
    const rows = await this.database.run((db) =>
      db
        .select(this.#columns)
        .from(t)
        .where(userId === undefined ? undefined : eq(t.userId, userId))
        .orderBy(asc(t.userId), asc(t.agentId), asc(t.seq)),
    );
    return makeEnvelope('facts', parsed, rows.map(toFact), this.clock);
  }

  /** Replaces every (user, agent) partition the snapshot contains, in one transaction. */
  async restore(snapshot: unknown, options: RestoreOptions = {}): Promise<RestoreReport> {
    const records = parseSnapshot('facts', FactSchema, snapshot, options, (f) => f.userId);
    const groups = groupByPartition(
      records,
      (f) => ({ userId: f.userId, agentId: f.agentId }),
      (p) => `${p.userId}|${agentKey(p.agentId)}`,
      (f) => f.id,
    );
    const t = this.tables.facts;
    // Restores of facts take turns: two replacing overlapping partitions could otherwise deadlock.
    await this.database.lockedTransaction('facts-restore', undefined, async (tx) => {
      for (const { partition, records: facts } of groups) {
        await tx.delete(t).where(this.#partition(partition));
        const size = maxRowsPerInsert(toRow(facts[0]!));
        for (const batch of batches(facts, size)) await tx.insert(t).values(batch.map(toRow));
      }
    });
    if (records.length >= VACUUM_AFTER_ROWS) {
      await vacuumAfterBulkWrite(this.database.client, this.database.schema);
    }
    return { records: records.length, partitions: groups.length };
  }

  get #columns() {
    const {
      searchTerms: _terms,
      searchLength: _length,
      tagKeys: _tagKeys,
      seq: _seq,
      ...columns
    } = getTableColumns(this.tables.facts);
    return columns;
  }

  /**
   * core's `newestUpdatedFirst`, read in order from `facts_updated_idx`. Timestamps are stored to the
   * millisecond, so they order as core's ISO strings do; ids compare byte-wise (`collate "C"`), which for
   * the ASCII ids core allows is core's code-unit order, whatever the database's default collation.
   */
  get #updatedOrder(): SQL[] {
    const t = this.tables.facts;
    return [desc(t.updatedAt), desc(t.createdAt), sql`${t.id} collate "C"`];
  }

  #partition(scope: { userId: string; agentId?: string | undefined }): SQL {
    const t = this.tables.facts;
    return and(eq(t.userId, scope.userId), eq(t.agentId, agentKey(scope.agentId)))!;
  }

  #filters(scope: Scope, category: string | undefined, tags: string[] | undefined): SQL | undefined {
    const t = this.tables.facts;
    return and(
      this.#partition(scope),
      category === undefined ? undefined : underPrefix(t.category, category),
      hasAllTags(t.tagKeys, tags),
    );
  }
}

type FactRow = Omit<ReturnType<typeof toRow>, 'tagKeys' | 'searchTerms' | 'searchLength'>;

/** A partition's key in the row cache (FactSearch keys its index cache the same way). */
function partitionKey(scope: { userId: string; agentId?: string }): string {
  return `${scope.userId}\u0000${agentKey(scope.agentId)}`;
}

function toRow(fact: Fact) {
  return {
    userId: fact.userId,
    agentId: agentKey(fact.agentId),
    id: fact.id,
    title: fact.title ?? null,
    content: fact.content,
    category: fact.category,
    tags: fact.tags,
    tagKeys: tagKeys(fact.tags),
    metadata: fact.metadata,
    provenance: fact.provenance,
    eventTime: fact.eventTime ?? null,
    createdAt: fact.createdAt,
    updatedAt: fact.updatedAt,
    version: fact.version,
    ...analyzeFact(fact),
  };
}

function toFact(row: FactRow): Fact {
  return {
    id: row.id,
    userId: row.userId,
    ...agentField(row.agentId),
    ...(row.title === null ? {} : { title: row.title }),
    content: row.content,
    category: row.category,
    tags: row.tags,
    metadata: row.metadata,
    provenance: row.provenance,
    ...(row.eventTime === null ? {} : { eventTime: row.eventTime }),
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    version: row.version,
  };
}
