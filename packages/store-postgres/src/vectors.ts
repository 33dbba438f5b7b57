import { type Clock, CorruptDataError, type Scope, ValidationError } from '@kioku/core';
import {
  makeVectorSnapshot,
  parseOrThrow,
  parseScope,
  parseVectorIds,
  parseVectorPoints,
  parseVectorQuery,
  parseVectorSelection,
  parseVectorSnapshot,
  sortModelCounts,
  systemClock,
} from '@kioku/core/adapter';
import {
  type RestoreOptions,
  type RestoreReport,
  type SnapshotSelector,
  SnapshotSelectorSchema,
  type VectorHit,
  type VectorIndex,
  type VectorModelCount,
  type VectorPoint,
  type VectorPointInput,
  type VectorQuery,
  type VectorRecord,
  VectorRecordSchema,
  type VectorSelection,
  type VectorSnapshot,
} from '@kioku/core/store';
import type { PendingQuery, Row, Sql, TransactionSql } from 'postgres';
import { type PostgresConnectionOptions, PostgresDatabase } from './database.js';
import { toKiokuError } from './errors.js';
import { agentField, agentKey, batches } from './sql.js';
import {
  createVectorTable,
  describeServer,
  ensurePgvector,
  type PgvectorInfo,
  readPgvector,
} from './vector-setup.js';

const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,50}$/;

export interface PostgresVectorIndexOptions extends PostgresConnectionOptions {
  /** Size of the vectors (the embedder's `dimensions`); pgvector's HNSW indexes up to 2,000. */
  dimensions: number;
  /** The table holding every kind's points, in `schema` (default `vectors`). */
  table?: string;
  /** A database shared with Kioku's other Postgres stores (what `createPostgresStores` passes). */
  database?: PostgresDatabase;
  /**
   * Candidates the HNSW scan keeps (`hnsw.ef_search`, default 100, at least the query's `limit`): higher
   * finds more of the true nearest neighbours and costs more.
   */
  efSearch?: number;
  /** Points per INSERT statement (default 500). */
  batchSize?: number;
  /** Time source for snapshot timestamps (default the system clock). */
  clock?: Clock;
}

type Filter = Record<string, string | number | boolean>;

interface PointRow {
  user_id: string;
  agent_id: string;
  id: string;
  kind: string;
  model: string | null;
  payload: Record<string, unknown>;
  embedding: string;
}

interface HitRow {
  id: string;
  kind: string;
  model: string | null;
  payload: VectorHit['payload'];
  score: number;
}

/** pgvector's text form of a vector: `[1,0.5,-2]`. */
const vectorText = (vector: readonly number[]) => `[${vector.join(',')}]`;

/**
 * Kioku's VectorIndex on PostgreSQL with pgvector: one table (`<schema>.vectors` by default) holding every
 * kind's points as `vector(dimensions)` with their scope (`user_id`, `agent_id`, '' without an agent),
 * `kind`, the embedding `model` and the caller's payload (`jsonb`), keyed by (user_id, agent_id, id), with
 * an HNSW index for cosine distance. Every statement is confined to the caller's scope.
 *
 * Searches walk the HNSW index with pgvector's iterative scan (0.8+), so a scope, kind or payload filter
 * that the nearest candidates of the whole table do not satisfy still gets `limit` hits; when fewer come
 * back than asked for, the scope is searched exactly (see the README).
 *
 * `setup()` creates the extension (`CREATE EXTENSION IF NOT EXISTS vector`), the table and its indexes; a
 * server without pgvector is an UnsupportedError naming the server. Kioku's other Postgres stores never
 * need the extension.
 */
export class PostgresVectorIndex implements VectorIndex {
  readonly dimensions: number;
  readonly table: string;
  readonly #database: PostgresDatabase;
  readonly #ownsDatabase: boolean;
  readonly #efSearch: number;
  readonly #batchSize: number;
  readonly #clock: Clock;
  #pgvector: Promise<PgvectorInfo> | undefined;

  constructor(options: PostgresVectorIndexOptions) {
    if (!Number.isInteger(options.dimensions) || options.dimensions < 1 || options.dimensions > 16_000) {
      throw new ValidationError('PostgresVectorIndex dimensions must be an integer from 1 to 16000.');
    }
    const table = options.table ?? 'vectors';
    if (!TABLE_NAME.test(table)) {
      throw new ValidationError(
        `Invalid table name "${table}": use letters, digits and _ (at most 51), not starting with a digit.`,
      );
    }
    const efSearch = options.efSearch ?? 100;
    if (!Number.isInteger(efSearch) || efSearch < 1 || efSearch > 1000) {
      throw new ValidationError('PostgresVectorIndex efSearch must be an integer from 1 to 1000.');
    }
    this.dimensions = options.dimensions;
    this.table = table;
    this.#ownsDatabase = options.database === undefined;
    this.#database = options.database ?? new PostgresDatabase(options);
    this.#efSearch = efSearch;
    this.#batchSize = options.batchSize ?? 500;
    this.#clock = options.clock ?? systemClock;
  }

  get schema(): string {
    return this.#database.schema;
  }

  get #sql(): Sql {
    return this.#database.client;
  }

  /** `"schema"."table"`, for statements. */
  get #t() {
    return this.#sql(`${this.schema}.${this.table}`);
  }

  /**
   * Create the pgvector extension if missing, then the table, its HNSW (cosine) and scope indexes; check
   * that an existing table holds `vector(dimensions)`. Idempotent and safe from several processes at once
   * (they take turns on an advisory lock). Needs pgvector 0.5+ on the server (UnsupportedError otherwise).
   */
  async setup(): Promise<void> {
    const server = describeServer(this.#sql);
    const lockKey = `kioku:vectors:${this.schema}.${this.table}`;
    try {
      const info = await this.#sql.begin(async (tx) => {
        await tx`select pg_advisory_xact_lock(hashtextextended(${lockKey}, 0))`;
        const info = await ensurePgvector(tx, server);
        await createVectorTable(tx, this.schema, this.table, this.dimensions);
        return info;
      });
      this.#pgvector = Promise.resolve(info);
    } catch (error) {
      throw toKiokuError(error, this.schema);
    }
  }

  async upsert(scope: Scope, points: VectorPointInput[]): Promise<void> {
    const s = parseScope(scope);
    const unique = parseVectorPoints(points, this.dimensions);
    if (unique.length === 0) return;
    const parts = batches(unique, this.#batchSize);
    await this.#run(async () => {
      if (parts.length === 1) await this.#insert(this.#sql, s, parts[0]!);
      else await this.#sql.begin(async (tx) => Promise.all(parts.map((part) => this.#insert(tx, s, part))));
    });
  }

  async search(scope: Scope, query: VectorQuery): Promise<VectorHit[]> {
    const s = parseScope(scope);
    const q = parseVectorQuery(query, this.dimensions);
    const vector = vectorText(q.vector);
    const { iterativeScan } = await this.#info();
    // The filter is made by the connection that runs it: postgres.js 4 ties a fragment to its \`sql\`.
    const rows = await this.#run(() =>
      this.#sql.begin((tx) => [
        tx`select set_config('hnsw.ef_search', ${String(Math.max(this.#efSearch, q.limit))}, true)`,
        ...(iterativeScan ? [tx`select set_config('hnsw.iterative_scan', 'relaxed_order', true)`] : []),
        // Relaxed order may return neighbours slightly out of order: the outer query sorts them again.
        tx<HitRow[]>`
          with hits as materialized (
            select id, kind, model, payload, embedding <=> ${vector}::vector as distance
            from ${this.#t} where ${this.#where(s, q.kind, q.filter, tx)}
            order by distance limit ${q.limit}
          )
          select id, kind, model, payload, 1 - distance as score from hits order by distance, id`,
      ]),
    );
    let hits = rows.at(-1) as HitRow[];
    if (hits.length < q.limit)
      hits = await this.#exactSearch(this.#where(s, q.kind, q.filter), vector, q.limit);
    const out: VectorHit[] = [];
    for (const row of hits) {
      const score = Number.isNaN(row.score) ? 0 : row.score; // a zero vector has no direction
      if (q.minScore !== undefined && score < q.minScore) continue;
      out.push({
        id: row.id,
        kind: row.kind,
        score,
        payload: row.payload,
        ...(row.model === null ? {} : { model: row.model }),
      });
    }
    return out;
  }

  async delete(scope: Scope, ids: string[]): Promise<number> {
    const s = parseScope(scope);
    const unique = parseVectorIds(ids);
    if (unique.length === 0) return 0;
    const result = await this.#run(
      () =>
        this
          .#sql`delete from ${this.#t} where user_id = ${s.userId} and agent_id = ${agentKey(s.agentId)} and id = any(${unique}::text[])`,
    );
    return result.count;
  }

  async count(scope: Scope, selection: Pick<VectorSelection, 'kind'> = {}): Promise<number> {
    const s = parseScope(scope);
    const { kind } = parseVectorSelection(selection);
    const [row] = await this.#run(
      () =>
        this.#sql<{ n: number }[]>`select count(*)::int as n from ${this.#t} where ${this.#where(s, kind)}`,
    );
    return row?.n ?? 0;
  }

  async models(scope: Scope, selection: Pick<VectorSelection, 'kind'> = {}): Promise<VectorModelCount[]> {
    const s = parseScope(scope);
    const { kind } = parseVectorSelection(selection);
    const rows = await this.#run(
      () => this.#sql<VectorModelCount[]>`
        select model, count(*)::int as count from ${this.#t} where ${this.#where(s, kind)} group by model`,
    );
    return sortModelCounts(rows.map((r) => ({ model: r.model, count: r.count })));
  }

  async clear(scope: Scope, selection: VectorSelection = {}): Promise<number> {
    const s = parseScope(scope);
    const { kind, exceptModel } = parseVectorSelection(selection);
    const except =
      exceptModel === undefined ? this.#sql`` : this.#sql`and model is distinct from ${exceptModel}`;
    const result = await this.#run(
      () => this.#sql`delete from ${this.#t} where ${this.#where(s, kind)} ${except}`,
    );
    return result.count;
  }

  async eraseUser(userId: string): Promise<string[]> {
    parseOrThrow(SnapshotSelectorSchema, { userId }, 'user id');
    const rows = await this.#run(
      () => this.#sql<{ id: string }[]>`delete from ${this.#t} where user_id = ${userId} returning id`,
    );
    return rows.map((row) => row.id);
  }

  async snapshot(selector: SnapshotSelector): Promise<VectorSnapshot> {
    const parsed = parseOrThrow(SnapshotSelectorSchema, selector, 'snapshot selector');
    const owner = 'userId' in parsed ? this.#sql`where user_id = ${parsed.userId}` : this.#sql``;
    const rows = await this.#run(
      () => this.#sql<PointRow[]>`
        select user_id, agent_id, id, kind, model, payload, embedding::text as embedding
        from ${this.#t} ${owner}`,
    );
    return makeVectorSnapshot(
      parsed,
      this.dimensions,
      rows.map((row) => this.#record(row)),
      this.#clock,
    );
  }

  /**
   * Validates the whole snapshot first (dimensions included), then replaces every partition it contains
   * in one transaction: all of them are restored, or none.
   */
  async restore(snapshot: unknown, options: RestoreOptions = {}): Promise<RestoreReport> {
    const partitions = parseVectorSnapshot(snapshot, this.dimensions, options);
    let records = 0;
    await this.#run(() =>
      this.#sql.begin(async (tx) => {
        for (const partition of partitions) {
          const scope: Scope =
            partition.agentId === undefined
              ? { userId: partition.userId }
              : { userId: partition.userId, agentId: partition.agentId };
          await tx`delete from ${this.#t} where user_id = ${scope.userId} and agent_id = ${agentKey(scope.agentId)}`;
          for (const part of batches(partition.records, this.#batchSize)) await this.#insert(tx, scope, part);
          records += partition.records.length;
        }
      }),
    );
    return { records, partitions: partitions.length };
  }

  /** End the connection if this index opened it (a shared database or a client passed in stays open). */
  async close(): Promise<void> {
    if (this.#ownsDatabase) await this.#database.close();
  }

  /** One INSERT … ON CONFLICT of a batch of distinct ids, every column an array parameter. */
  #insert(sql: Sql | TransactionSql, scope: Scope, points: readonly VectorPoint[]) {
    return sql`
      insert into ${this.#t} as t (user_id, agent_id, id, kind, model, payload, embedding)
      select ${scope.userId}, ${agentKey(scope.agentId)}, p.id, p.kind, p.model, p.payload::jsonb, p.embedding::vector
      from unnest(
        ${points.map((p) => p.id)}::text[], ${points.map((p) => p.kind)}::text[],
        ${points.map((p) => p.model ?? null) as string[]}::text[],
        ${points.map((p) => JSON.stringify(p.payload))}::text[],
        ${points.map((p) => vectorText(p.vector))}::text[]
      ) as p(id, kind, model, payload, embedding)
      on conflict (user_id, agent_id, id) do update set
        kind = excluded.kind, model = excluded.model, payload = excluded.payload, embedding = excluded.embedding`;
  }

  /**
   * The scope's nearest points computed exactly (no index orders by the score expression): the answer when
   * the HNSW scan found fewer than `limit` (a small scope, or a filter few points pass).
   */
  #exactSearch(where: PendingQuery<Row[]>, vector: string, limit: number): Promise<HitRow[]> {
    return this.#run(
      () => this.#sql<HitRow[]>`
        select id, kind, model, payload, 1 - (embedding <=> ${vector}::vector) as score
        from ${this.#t} where ${where}
        order by coalesce(nullif(1 - (embedding <=> ${vector}::vector), 'NaN'), 0) desc, id
        limit ${limit}`,
    );
  }

  /** The scope's rows (this user, this agent or none), of one kind, with every payload key/value given. */
  #where(
    scope: Scope,
    kind?: string,
    filter?: Filter,
    sql: Sql | TransactionSql = this.#sql,
  ): PendingQuery<Row[]> {
    let where = sql`user_id = ${scope.userId} and agent_id = ${agentKey(scope.agentId)}`;
    if (kind !== undefined) where = sql`${where} and kind = ${kind}`;
    for (const [key, value] of Object.entries(filter ?? {}))
      where = sql`${where} and payload -> ${key} = ${JSON.stringify(value)}::jsonb`;
    return where;
  }

  /** A stored row as a Kioku record; a row that is not one is CORRUPT_DATA, never guessed at. */
  #record(row: PointRow): VectorRecord {
    let vector: unknown;
    try {
      vector = JSON.parse(row.embedding);
    } catch {
      vector = undefined;
    }
    const parsed = VectorRecordSchema.safeParse({
      id: row.id,
      kind: row.kind,
      userId: row.user_id,
      ...agentField(row.agent_id),
      ...(row.model === null ? {} : { model: row.model }),
      payload: row.payload,
      vector,
    });
    if (!parsed.success) {
      throw new CorruptDataError(
        `Row (${row.user_id}, ${row.agent_id}, ${row.id}) of ${this.schema}.${this.table} is not a Kioku vector point.`,
        { details: { table: `${this.schema}.${this.table}`, issues: parsed.error.issues.slice(0, 5) } },
      );
    }
    return parsed.data;
  }

  /** What `setup()` found on the server; read (nothing created) by an index that skipped it. */
  #info(): Promise<PgvectorInfo> {
    this.#pgvector ??= this.#run(async () => {
      const info = await readPgvector(this.#sql);
      // Without the extension the table cannot exist either: the search fails as "call setup()".
      return info ?? { version: '', iterativeScan: false };
    }).catch((error: unknown) => {
      this.#pgvector = undefined;
      throw error;
    });
    return this.#pgvector;
  }

  async #run<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      throw toKiokuError(error, this.schema);
    }
  }
}
