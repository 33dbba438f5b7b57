import { ConflictError, type Fact, type Scope } from '@kioku/core';
import {
  checkFactVersion,
  isoAt,
  missingFactError,
  newFact,
  parseOrThrow,
  parseWriteOptions,
  patchFact,
} from '@kioku/core/adapter';
import {
  type CategoryCount,
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
import { and, asc, count, desc, eq, type SQL, sql } from 'drizzle-orm';
import { analyze, factText } from './analysis.js';
import { agentColumn, agentOf, checkScope, SqliteStoreBase } from './base.js';
import { categoryUnder, hasAllTags } from './filters.js';
import { facts } from './schema.js';
import { scopeToken } from './search.js';

type FactRow = typeof facts.$inferSelect;

function toFact(row: FactRow): Fact {
  const fact: Fact = {
    id: row.id,
    userId: row.userId,
    content: row.content,
    category: row.category,
    tags: row.tags,
    metadata: row.metadata,
    provenance: row.provenance as Fact['provenance'],
    ...(row.eventTime === null ? {} : { eventTime: row.eventTime }),
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    version: row.version,
  };
  const agentId = agentOf(row.agentId);
  if (agentId !== undefined) fact.agentId = agentId;
  if (row.title !== null) fact.title = row.title;
  return fact;
}

function toRow(fact: Fact) {
  const search = analyze(factText(fact));
  return {
    userId: fact.userId,
    agentId: agentColumn(fact.agentId),
    id: fact.id,
    title: fact.title ?? null,
    content: fact.content,
    category: fact.category,
    tags: fact.tags,
    metadata: fact.metadata,
    provenance: fact.provenance,
    eventTime: fact.eventTime ?? null,
    createdAt: fact.createdAt,
    updatedAt: fact.updatedAt,
    version: fact.version,
    searchTerms: search.terms,
    searchLength: search.length,
  };
}

const inPartition = (scope: Scope): SQL =>
  and(eq(facts.userId, scope.userId), eq(facts.agentId, agentColumn(scope.agentId)))!;

const placeholder = sql.placeholder;

/** `rows, changes` of the partition's `kioku_search_stats` row. */
type PartitionRow = [number, number];

/** A plain `{}` (the default filter): nothing a schema check could reject or change. */
const isEmptyObject = (value: unknown): boolean =>
  typeof value === 'object' &&
  value !== null &&
  Object.getPrototypeOf(value) === Object.prototype &&
  Object.keys(value).length === 0;

/** `list` orders; `updated` is core's `newestUpdatedFirst` and reads the `kioku_facts_updated` index as is. */
const listOrder = {
  oldest: [asc(facts.createdAt), asc(facts.seq)],
  newest: [desc(facts.createdAt), desc(facts.seq)],
  updated: [desc(facts.updatedAt), desc(facts.createdAt), asc(facts.id)],
} as const;

/**
 * Facts in `kioku_facts`, one row per fact, partitioned by user + agent columns. Search runs on FTS5
 * (`kioku_facts_fts`) over the analyzed title, content, tags and category.
 */
export class SqliteFactStore extends SqliteStoreBase implements FactStore {
  /**
   * The hottest statements, built and prepared once (on first use, once the schema is there): building a
   * query with drizzle and preparing it in SQLite costs several times what running it does.
   */
  #prepared: ReturnType<SqliteFactStore['buildStatements']> | undefined;

  private buildStatements() {
    return {
      get: this.orm
        .select()
        .from(facts)
        .where(
          and(
            eq(facts.userId, placeholder('userId')),
            eq(facts.agentId, placeholder('agentId')),
            eq(facts.id, placeholder('id')),
          ),
        )
        .prepare(),
      insert: this.#rawInsert(),
      updatedPage: this.orm
        .select()
        .from(facts)
        .where(and(eq(facts.userId, placeholder('userId')), eq(facts.agentId, placeholder('agentId'))))
        .orderBy(...listOrder.updated)
        .limit(placeholder('limit'))
        .offset(placeholder('offset'))
        .prepare(),
      /** The rows of a search's winners: one statement for any number of them (a JSON array of seqs). */
      bySeq: this.orm
        .select()
        .from(facts)
        .where(sql`${facts.seq} IN (SELECT value FROM json_each(${placeholder('seqs')}))`)
        .prepare(),
      /** The partition's row count and change counter (`[rows, changes]`), kept by the FTS triggers. */
      partitionRows: this.connection.raw
        .prepare(
          "SELECT rows, changes FROM kioku_search_stats WHERE table_name = 'kioku_facts' AND scope = ?",
        )
        .raw(true),
    };
  }

  /**
   * The fact INSERT as drizzle writes it, run straight through better-sqlite3 with positional values:
   * drizzle's named-placeholder mapping cost ~5-10 µs of a ~110 µs create.
   */
  #rawInsert() {
    const { sql: text, params } = this.orm
      .insert(facts)
      .values({
        userId: placeholder('userId'),
        agentId: placeholder('agentId'),
        id: placeholder('id'),
        title: placeholder('title'),
        content: placeholder('content'),
        category: placeholder('category'),
        tags: placeholder('tags'),
        metadata: placeholder('metadata'),
        provenance: placeholder('provenance'),
        eventTime: placeholder('eventTime'),
        createdAt: placeholder('createdAt'),
        updatedAt: placeholder('updatedAt'),
        version: placeholder('version'),
        searchTerms: placeholder('searchTerms'),
        searchLength: placeholder('searchLength'),
      })
      .onConflictDoNothing()
      .toSQL();
    // A placeholder, or (for JSON columns) a parameter wrapping one with the column's encoder.
    const names = params.map((p) => {
      const param = p as { name?: string; value?: { name?: string } };
      return (param.name ?? param.value?.name) as keyof ReturnType<typeof toRow>;
    });
    if (names.some((name) => name === undefined)) throw new Error('Unexpected fact INSERT parameters.');
    const statement = this.connection.raw.prepare(text);
    return {
      run(fact: Fact): { changes: number } {
        const row = toRow(fact);
        const values = {
          ...row,
          tags: JSON.stringify(row.tags),
          metadata: JSON.stringify(row.metadata),
          provenance: JSON.stringify(row.provenance),
        };
        return statement.run(names.map((name) => values[name]));
      },
    };
  }

  get #statements() {
    this.#prepared ??= this.buildStatements();
    return this.#prepared;
  }

  /** Insert one fact (inside a write transaction); a fact with the same id in its partition is a conflict. */
  #insert(fact: Fact): void {
    if (this.#statements.insert.run(fact).changes === 0) {
      throw new ConflictError(`A fact with id "${fact.id}" already exists.`);
    }
  }

  async get(scope: Scope, id: string): Promise<Fact | null> {
    const s = checkScope(scope);
    parseOrThrow(IdSchema, id, 'fact id');
    const row = this.readOne(() =>
      this.#statements.get.get({ userId: s.userId, agentId: agentColumn(s.agentId), id }),
    );
    return row ? toFact(row) : null;
  }

  async list(scope: Scope, options: FactListOptions = {}): Promise<Fact[]> {
    const s = checkScope(scope);
    const opts = parseOrThrow(FactListOptionsSchema, options, 'list options');
    if (opts.order === 'updated' && opts.category === undefined && !opts.tags?.length) {
      // The fact block's page (mode `all`), read every turn: one prepared statement (a single SELECT needs no transaction).
      const page = { userId: s.userId, agentId: agentColumn(s.agentId), offset: opts.offset };
      const limit = opts.limit ?? Number.MAX_SAFE_INTEGER;
      return this.readOne(() => this.#statements.updatedPage.all({ ...page, limit })).map(toFact);
    }
    const rows = this.read(() =>
      this.orm
        .select()
        .from(facts)
        .where(this.#filters(s, opts.category, opts.tags))
        .orderBy(...listOrder[opts.order])
        // SQLite takes an OFFSET only after a LIMIT.
        .limit(opts.limit ?? Number.MAX_SAFE_INTEGER)
        .offset(opts.offset)
        .all(),
    );
    return rows.map(toFact);
  }

  /**
   * The partition's write counter: the FTS triggers count every insert, delete and search-column update,
   * and `kioku_facts_revision` (migration 0009) every other update, in the writing transaction.
   */
  async revision(scope: Scope): Promise<string> {
    const s = checkScope(scope);
    const scopeKey = scopeToken(s.userId, agentColumn(s.agentId));
    const row = this.readOne(() => this.#statements.partitionRows.get(scopeKey)) as PartitionRow | undefined;
    return `${row?.[0] ?? 0}.${row?.[1] ?? 0}`;
  }

  async count(scope: Scope, filter: FactFilter = {}): Promise<number> {
    const s = checkScope(scope);
    // No filter (the fact block's count every turn) needs no schema check.
    const f = isEmptyObject(filter) ? {} : parseOrThrow(FactFilterSchema, filter, 'count filter');
    if (f.category === undefined && !f.tags?.length) {
      // The partition's row count, kept by the FTS triggers in the same transaction as every write.
      const scopeKey = scopeToken(s.userId, agentColumn(s.agentId));
      const row = this.readOne(() => this.#statements.partitionRows.get(scopeKey)) as
        | PartitionRow
        | undefined;
      return row?.[0] ?? 0;
    }
    return this.readOne(
      () =>
        this.orm
          .select({ n: count() })
          .from(facts)
          .where(this.#filters(s, f.category, f.tags))
          .get()?.n ?? 0,
    );
  }

  async create(scope: Scope, input: FactInput): Promise<Fact> {
    const s = checkScope(scope);
    const fact = newFact(s, parseOrThrow(FactInputSchema, input, 'fact'), isoAt(this.clock));
    // One INSERT is atomic by itself and takes the write lock as it starts (waiting out busy_timeout), as
    // BEGIN IMMEDIATE would: no transaction around it (~10 µs of a ~100 µs create).
    this.writeOne(() => this.#insert(fact));
    return fact;
  }

  /** Insert many facts in one transaction (imports, benchmarks). All or nothing. */
  async createMany(scope: Scope, inputs: readonly FactInput[]): Promise<Fact[]> {
    const s = checkScope(scope);
    const now = isoAt(this.clock);
    const created = inputs.map((input, i) =>
      newFact(s, parseOrThrow(FactInputSchema, input, `fact ${i}`), now),
    );
    this.write(() => {
      for (const fact of created) this.#insert(fact);
    });
    return created;
  }

  async update(scope: Scope, id: string, patch: FactPatch, options?: WriteOptions): Promise<Fact> {
    const s = checkScope(scope);
    parseOrThrow(IdSchema, id, 'fact id');
    const changes = parseOrThrow(FactPatchSchema, patch, 'fact update');
    const { expectedVersion } = parseWriteOptions(options);
    const updatedAt = isoAt(this.clock);
    return this.write(() => {
      const row = this.orm
        .select()
        .from(facts)
        .where(and(inPartition(s), eq(facts.id, id)))
        .get();
      if (!row) throw missingFactError(id);
      const next = patchFact(toFact(row), changes, updatedAt, expectedVersion);
      const { userId: _u, agentId: _a, id: _i, createdAt: _c, ...values } = toRow(next);
      this.orm.update(facts).set(values).where(eq(facts.seq, row.seq)).run();
      return next;
    });
  }

  async delete(scope: Scope, id: string, options?: WriteOptions): Promise<boolean> {
    const s = checkScope(scope);
    parseOrThrow(IdSchema, id, 'fact id');
    const { expectedVersion } = parseWriteOptions(options);
    const where = and(inPartition(s), eq(facts.id, id));
    if (expectedVersion === undefined) {
      return this.write(() => this.orm.delete(facts).where(where).run().changes > 0);
    }
    return this.write(() => {
      const row = this.orm.select({ id: facts.id, version: facts.version }).from(facts).where(where).get();
      if (!row) return false;
      checkFactVersion(row, expectedVersion);
      return this.orm.delete(facts).where(where).run().changes > 0;
    });
  }

  async search(scope: Scope, query: FactQuery): Promise<FactHit[]> {
    const s = checkScope(scope);
    const q = parseOrThrow(FactQuerySchema, query, 'fact query');
    const where = this.#filters(s, q.category, q.tags);
    return this.read(() => {
      if (!q.query?.trim()) {
        return this.orm
          .select()
          .from(facts)
          .where(where)
          .orderBy(...listOrder.updated)
          .limit(q.limit)
          .all()
          .map((row) => ({ fact: toFact(row), score: 0 }));
      }
      const filters = and(
        q.category === undefined ? undefined : categoryUnder(facts.category, q.category),
        hasAllTags(facts.tags, q.tags),
      );
      const target = { table: facts, scope: scopeToken(s.userId, agentColumn(s.agentId)), where: filters };
      const ranked = this.lexical.search(target, q.query, q.limit);
      if (ranked.length === 0) return [];
      const rows = new Map(
        this.#statements.bySeq
          .all({ seqs: JSON.stringify(ranked.map((r) => r.seq)) })
          // The partition is checked here: in SQL it would tempt SQLite to scan the partition's index.
          .filter((row) => row.userId === s.userId && row.agentId === agentColumn(s.agentId))
          .map((row) => [row.seq, row]),
      );
      return ranked.flatMap((r) => {
        const row = rows.get(r.seq);
        return row ? [{ fact: toFact(row), score: r.score }] : [];
      });
    });
  }

  async categories(scope: Scope): Promise<CategoryCount[]> {
    const s = checkScope(scope);
    const rows = this.read(() =>
      this.orm
        .select({ category: facts.category, count: count() })
        .from(facts)
        .where(inPartition(s))
        .groupBy(facts.category)
        .all(),
    );
    return rows.sort((a, b) => a.category.localeCompare(b.category));
  }

  async eraseUser(userId: string): Promise<string[]> {
    return this.eraseAll(userId, () =>
      this.orm
        .delete(facts)
        .where(eq(facts.userId, userId))
        .returning({ id: facts.id })
        .all()
        .map((r) => r.id),
    );
  }

  async snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<Fact>> {
    return this.snapshotOf('facts', selector, (userId) =>
      this.orm
        .select()
        .from(facts)
        .where(userId === undefined ? undefined : eq(facts.userId, userId))
        .orderBy(asc(facts.userId), asc(facts.agentId), asc(facts.seq))
        .all()
        .map(toFact),
    );
  }

  async restore(snapshot: unknown, options: RestoreOptions = {}): Promise<RestoreReport> {
    return this.restoreFrom('facts', FactSchema, snapshot, options, {
      userIdOf: (f) => f.userId,
      partitionOf: (f) => `${f.userId}/${agentColumn(f.agentId)}`,
      idOf: (f) => f.id,
      replace: (records) => {
        this.orm.delete(facts).where(inPartition(records[0]!)).run();
        for (const fact of records) this.orm.insert(facts).values(toRow(fact)).run();
      },
    });
  }

  #filters(scope: Scope, category: string | undefined, tags: string[] | undefined): SQL {
    return and(
      inPartition(scope),
      category === undefined ? undefined : categoryUnder(facts.category, category),
      hasAllTags(facts.tags, tags),
    )!;
  }
}
