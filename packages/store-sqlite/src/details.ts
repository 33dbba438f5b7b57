import { type DetailRecord, defaultTokenizer, type Scope, type Tokenizer } from '@kioku/core';
import {
  type DetailFilter,
  detailExistsError,
  isoAt,
  newDetail,
  parseOrThrow,
  parseScope,
  visibleDetail,
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
import { and, asc, desc, eq, inArray, type SQL } from 'drizzle-orm';
import { analyze, detailText } from './analysis.js';
import { agentOf, SqliteStoreBase, type SqliteStoreOptions } from './base.js';
import { details } from './schema.js';
import { scopeToken } from './search.js';

export interface SqliteDetailStoreOptions extends SqliteStoreOptions {
  tokenizer?: Tokenizer;
}

type DetailRow = typeof details.$inferSelect;

function toDetail(row: DetailRow): DetailRecord {
  const detail: DetailRecord = {
    id: row.id,
    userId: row.userId,
    type: row.type,
    description: row.description,
    content: row.content,
    tokenCount: row.tokenCount,
    metadata: row.metadata,
    createdAt: row.createdAt,
    active: row.active,
  };
  const agentId = agentOf(row.agentId);
  if (agentId !== undefined) detail.agentId = agentId;
  const threadId = agentOf(row.threadId);
  if (threadId !== undefined) detail.threadId = threadId;
  if (row.summary !== null) detail.summary = row.summary;
  return detail;
}

function toRow(detail: DetailRecord) {
  const search = analyze(detailText(detail));
  return {
    userId: detail.userId,
    id: detail.id,
    agentId: detail.agentId ?? null,
    threadId: detail.threadId ?? null,
    type: detail.type,
    description: detail.description,
    summary: detail.summary ?? null,
    content: detail.content,
    tokenCount: detail.tokenCount,
    metadata: detail.metadata,
    createdAt: detail.createdAt,
    active: detail.active,
    searchTerms: search.terms,
    searchLength: search.length,
  };
}

function filtered(userId: string, f: DetailFilter): SQL {
  return and(
    eq(details.userId, userId),
    f.includeInactive ? undefined : eq(details.active, true),
    f.type === undefined ? undefined : eq(details.type, f.type),
    f.agentId === undefined ? undefined : eq(details.agentId, f.agentId),
    f.threadId === undefined ? undefined : eq(details.threadId, f.threadId),
  )!;
}

/**
 * Details (full content behind MemoryRefs) in `kioku_details`, partitioned by user: any agent or thread
 * of the user reads them. Searched with FTS5 over description, summary, type and content.
 */
export class SqliteDetailStore extends SqliteStoreBase implements DetailStore {
  readonly #tokenizer: Tokenizer;

  constructor(options: SqliteDetailStoreOptions) {
    super(options);
    this.#tokenizer = options.tokenizer ?? defaultTokenizer;
  }

  async create(scope: Scope, input: DetailInput): Promise<DetailRecord> {
    const s = parseScope(scope);
    const record = newDetail(s, input, this.#tokenizer, isoAt(this.clock));
    this.write(() => {
      const inserted = this.orm.insert(details).values(toRow(record)).onConflictDoNothing().run();
      if (inserted.changes === 0) throw detailExistsError(record.id);
    });
    return record;
  }

  async get(
    scope: Scope,
    id: string,
    options: { includeInactive?: boolean } = {},
  ): Promise<DetailRecord | null> {
    const s = parseScope(scope);
    parseOrThrow(IdSchema, id, 'detail id');
    const row = this.read(() =>
      this.orm
        .select()
        .from(details)
        .where(and(eq(details.userId, s.userId), eq(details.id, id)))
        .get(),
    );
    return visibleDetail(row ? toDetail(row) : null, options);
  }

  async list(scope: Scope, options: DetailListOptions = {}): Promise<DetailRecord[]> {
    const s = parseScope(scope);
    const f = parseOrThrow(DetailListOptionsSchema, options, 'detail list options');
    const rows = this.read(() =>
      this.orm
        .select()
        .from(details)
        .where(filtered(s.userId, f))
        .orderBy(desc(details.seq))
        .limit(f.limit ?? Number.MAX_SAFE_INTEGER)
        .all(),
    );
    return rows.map(toDetail);
  }

  async search(scope: Scope, query: DetailQuery): Promise<DetailHit[]> {
    const s = parseScope(scope);
    const q = parseOrThrow(DetailQuerySchema, query, 'detail query');
    return this.read(() => {
      const target = { table: details, scope: scopeToken(s.userId), where: filtered(s.userId, q) };
      const ranked = this.lexical.search(target, q.query, q.limit);
      if (ranked.length === 0) return [];
      const rows = new Map(
        this.orm
          .select()
          .from(details)
          .where(
            inArray(
              details.seq,
              ranked.map((r) => r.seq),
            ),
          )
          .all()
          // The partition is checked here: in SQL it would tempt SQLite to scan the partition's index.
          .filter((row) => row.userId === s.userId)
          .map((row) => [row.seq, row]),
      );
      return ranked.flatMap((r) => {
        const row = rows.get(r.seq);
        return row ? [{ detail: toDetail(row), score: r.score }] : [];
      });
    });
  }

  async deactivate(scope: Scope, id: string): Promise<boolean> {
    const s = parseScope(scope);
    parseOrThrow(IdSchema, id, 'detail id');
    return this.write(
      () =>
        this.orm
          .update(details)
          .set({ active: false })
          .where(and(eq(details.userId, s.userId), eq(details.id, id), eq(details.active, true)))
          .run().changes > 0,
    );
  }

  async eraseUser(userId: string): Promise<string[]> {
    return this.eraseAll(userId, () =>
      this.orm
        .delete(details)
        .where(eq(details.userId, userId))
        .returning({ id: details.id })
        .all()
        .map((r) => r.id),
    );
  }

  async delete(scope: Scope, id: string): Promise<boolean> {
    const s = parseScope(scope);
    parseOrThrow(IdSchema, id, 'detail id');
    return this.write(
      () =>
        this.orm
          .delete(details)
          .where(and(eq(details.userId, s.userId), eq(details.id, id)))
          .run().changes > 0,
    );
  }

  async snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<DetailRecord>> {
    return this.snapshotOf('details', selector, (userId) =>
      this.orm
        .select()
        .from(details)
        .where(userId === undefined ? undefined : eq(details.userId, userId))
        .orderBy(asc(details.userId), asc(details.seq))
        .all()
        .map(toDetail),
    );
  }

  async restore(snapshot: unknown, options: RestoreOptions = {}): Promise<RestoreReport> {
    return this.restoreFrom('details', DetailRecordSchema, snapshot, options, {
      userIdOf: (d) => d.userId,
      partitionOf: (d) => d.userId,
      idOf: (d) => d.id,
      replace: (records) => {
        this.orm.delete(details).where(eq(details.userId, records[0]!.userId)).run();
        for (const detail of records) this.orm.insert(details).values(toRow(detail)).run();
      },
    });
  }
}
