import { type DetailRecord, defaultTokenizer, type Scope, type Tokenizer } from '@kioku/core';
import {
  type DetailFilter,
  detailExistsError,
  isoAt,
  makeEnvelope,
  newDetail,
  parseOrThrow,
  parseScope,
} from '@kioku/core/adapter';
import {
  type DetailHit,
  type DetailInput,
  type DetailListOptions,
  DetailListOptionsSchema,
  type DetailQuery,
  DetailQuerySchema,
  DetailRecordSchema,
  type DetailStore,
  IdSchema,
  type RestoreOptions,
  type RestoreReport,
  type SnapshotEnvelope,
  type SnapshotSelector,
} from '@kioku/core/store';
import { and, asc, desc, eq, getTableColumns, type SQL } from 'drizzle-orm';
import { lexicalMatchOfText } from './search.js';
import { groupByPartition, parseSnapshot, selectedUser } from './snapshot.js';
import { batches, withoutNulls } from './sql.js';
import { PostgresStore, type PostgresStoreOptions } from './store.js';

export interface PostgresDetailStoreOptions extends PostgresStoreOptions {
  tokenizer?: Tokenizer;
}

/**
 * DetailStore on PostgreSQL: a row per detail in `details`, owned by the user (agent and thread recorded,
 * '' for none); `deactivate` clears `is_active`.
 */
export class PostgresDetailStore extends PostgresStore implements DetailStore {
  readonly #tokenizer: Tokenizer;

  constructor(options: PostgresDetailStoreOptions) {
    super(options);
    this.#tokenizer = options.tokenizer ?? defaultTokenizer;
  }

  async create(scope: Scope, input: DetailInput): Promise<DetailRecord> {
    const s = parseScope(scope);
    const record = newDetail(s, input, this.#tokenizer, isoAt(this.clock));
    const t = this.tables.details;
    const inserted = await this.database.run((db) =>
      db.insert(t).values(toRow(record)).onConflictDoNothing().returning({ id: t.id }),
    );
    if (inserted.length === 0) throw detailExistsError(record.id);
    return record;
  }

  async get(
    scope: Scope,
    id: string,
    options: { includeInactive?: boolean } = {},
  ): Promise<DetailRecord | null> {
    const s = parseScope(scope);
    parseOrThrow(IdSchema, id, 'detail id');
    const t = this.tables.details;
    const rows = await this.database.run((db) =>
      db
        .select(this.#columns)
        .from(t)
        .where(
          and(
            eq(t.userId, s.userId),
            eq(t.id, id),
            options.includeInactive ? undefined : eq(t.isActive, true),
          ),
        ),
    );
    return rows[0] ? toDetail(rows[0]) : null;
  }

  async list(scope: Scope, options: DetailListOptions = {}): Promise<DetailRecord[]> {
    const s = parseScope(scope);
    const f = parseOrThrow(DetailListOptionsSchema, options, 'detail list options');
    const t = this.tables.details;
    const rows = await this.database.run((db) => {
      const query = db.select(this.#columns).from(t).where(this.#filter(s.userId, f)).orderBy(desc(t.seq));
      return f.limit === undefined ? query : query.limit(f.limit);
    });
    return rows.map(toDetail);
  }

  async search(scope: Scope, query: DetailQuery): Promise<DetailHit[]> {
    const s = parseScope(scope);
    const q = parseOrThrow(DetailQuerySchema, query, 'detail query');
    const t = this.tables.details;
    // The query is analysed in the same statement: one round trip.
    const match = lexicalMatchOfText(t.search, q.query);
    const rows = await this.database.run((db) =>
      db
        .select({ ...this.#columns, score: match.score })
        .from(t)
        .where(and(this.#filter(s.userId, q), match.where))
        .orderBy(desc(match.score), asc(t.seq))
        .limit(q.limit)
        // A named statement, prepared once per connection: drizzle's default (unnamed) is parsed and
        // described in a round trip of its own before it runs, on every call of every turn.
        .prepare('kioku_details_search')
        .execute(),
    );
    return rows.map(({ score, ...row }) => ({ detail: toDetail(row), score }));
  }

  async deactivate(scope: Scope, id: string): Promise<boolean> {
    const s = parseScope(scope);
    parseOrThrow(IdSchema, id, 'detail id');
    const t = this.tables.details;
    const rows = await this.database.run((db) =>
      db
        .update(t)
        .set({ isActive: false })
        .where(and(eq(t.userId, s.userId), eq(t.id, id), eq(t.isActive, true)))
        .returning({ id: t.id }),
    );
    return rows.length > 0;
  }

  async delete(scope: Scope, id: string): Promise<boolean> {
    const s = parseScope(scope);
    parseOrThrow(IdSchema, id, 'detail id');
    const t = this.tables.details;
    const rows = await this.database.run((db) =>
      db
        .delete(t)
        .where(and(eq(t.userId, s.userId), eq(t.id, id)))
        .returning({ id: t.id }),
    );
    return rows.length > 0;
  }

  /** One statement. */
  async eraseUser(userId: string): Promise<string[]> {
    selectedUser({ userId });
    const t = this.tables.details;
    const rows = await this.database.run((db) =>
      db.delete(t).where(eq(t.userId, userId)).returning({ id: t.id }),
    );
    return rows.map((r) => r.id);
  }

  async snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<DetailRecord>> {
    const { parsed, userId } = selectedUser(selector);
    const t = this.tables.details;
    const rows = await this.database.run((db) =>
      db
        .select(this.#columns)
        .from(t)
        .where(userId === undefined ? undefined : eq(t.userId, userId))
        .orderBy(asc(t.userId), asc(t.seq)),
    );
    return makeEnvelope('details', parsed, rows.map(toDetail), this.clock);
  }

  /** Replaces the details of every user the snapshot contains, in one transaction. */
  async restore(snapshot: unknown, options: RestoreOptions = {}): Promise<RestoreReport> {
    const records = parseSnapshot('details', DetailRecordSchema, snapshot, options, (d) => d.userId);
    const groups = groupByPartition(
      records,
      (d) => d.userId,
      (userId) => userId,
      (d) => d.id,
    );
    const t = this.tables.details;
    // Restores of details take turns: two replacing overlapping partitions could otherwise deadlock.
    await this.database.lockedTransaction('details-restore', undefined, async (tx) => {
      for (const { partition: userId, records: details } of groups) {
        await tx.delete(t).where(eq(t.userId, userId));
        for (const batch of batches(details)) await tx.insert(t).values(batch.map(toRow));
      }
    });
    return { records: records.length, partitions: groups.length };
  }

  get #columns() {
    const { search: _search, seq: _seq, ...columns } = getTableColumns(this.tables.details);
    return columns;
  }

  #filter(userId: string, f: DetailFilter): SQL {
    const t = this.tables.details;
    return and(
      eq(t.userId, userId),
      f.includeInactive ? undefined : eq(t.isActive, true),
      f.type === undefined ? undefined : eq(t.type, f.type),
      f.agentId === undefined ? undefined : eq(t.agentId, f.agentId),
      f.threadId === undefined ? undefined : eq(t.threadId, f.threadId),
    )!;
  }
}

function toRow(d: DetailRecord) {
  return {
    userId: d.userId,
    id: d.id,
    agentId: d.agentId ?? '',
    threadId: d.threadId ?? '',
    type: d.type,
    description: d.description,
    summary: d.summary ?? null,
    content: d.content,
    tokenCount: d.tokenCount,
    metadata: d.metadata,
    createdAt: d.createdAt,
    isActive: d.active,
  };
}

function toDetail(row: ReturnType<typeof toRow>): DetailRecord {
  const { agentId, threadId, isActive, ...rest } = row;
  return {
    ...withoutNulls(rest),
    ...(agentId === '' ? {} : { agentId }),
    ...(threadId === '' ? {} : { threadId }),
    active: isActive,
  };
}
