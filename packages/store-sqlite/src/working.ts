import type { Scope, WorkingEntry } from '@kioku/core';
import {
  checkWorkingVersion,
  isWorkingEntryLive,
  keyRootOf,
  namespaceEvictions,
  namespaceOf,
  newWorkingSet,
  parseOrThrow,
  parseScope,
  parseWriteOptions,
  versionedWorkingEntry,
  type WorkingLimits,
  type WorkingMemoryOptions,
  workingLimits,
} from '@kioku/core/adapter';
import {
  type RestoreOptions,
  type RestoreReport,
  type SnapshotEnvelope,
  type SnapshotSelector,
  type WorkingEntryInfo,
  WorkingEntrySchema,
  type WorkingHit,
  WorkingKeySchema,
  type WorkingMemoryStore,
  WorkingPrefixSchema,
  type WorkingQuery,
  WorkingQuerySchema,
  type WorkingSetOptions,
  type WriteOptions,
} from '@kioku/core/store';
import { and, asc, count, desc, eq, gt, inArray, isNotNull, lte, ne, type SQL } from 'drizzle-orm';
import { analyze, workingText } from './analysis.js';
import { agentColumn, agentOf, checkScope, SqliteStoreBase, type SqliteStoreOptions } from './base.js';
import { categoryUnder, hasAllTags, keyUnder } from './filters.js';
import { working } from './schema.js';
import { scopeToken } from './search.js';

export type SqliteWorkingMemoryOptions = SqliteStoreOptions & WorkingMemoryOptions;

type WorkingRow = typeof working.$inferSelect;

function toEntry(
  row: Omit<WorkingRow, 'seq' | 'namespace' | 'expiresMs' | 'searchTerms' | 'searchLength' | 'searchScope'>,
): WorkingEntry {
  const entry: WorkingEntry = {
    key: row.key,
    userId: row.userId,
    value: row.value,
    storedAt: row.storedAt,
    expiresAt: row.expiresAt,
    tags: row.tags,
    version: row.version,
  };
  const agentId = agentOf(row.agentId);
  if (agentId !== undefined) entry.agentId = agentId;
  if (row.category !== null) entry.category = row.category;
  return entry;
}

/** Prefixes already validated (a turn lists the same two), so `list` skips re-running zod on them. */
const validPrefixes = new Set<string>();
const MAX_VALID_PREFIXES = 10_000;

function checkPrefix(prefix: string): void {
  if (validPrefixes.has(prefix)) return;
  parseOrThrow(WorkingPrefixSchema, prefix, 'working-memory prefix');
  if (validPrefixes.size >= MAX_VALID_PREFIXES) validPrefixes.clear();
  validPrefixes.add(prefix);
}

/** `key, stored_at, expires_at, category, tags, version` of a row, as `list` reads it. */
type InfoRow = [string, string, string, string | null, string, number];

/** What `workingEntryInfo(toEntry(row))` gives (the same keys in the same order), from a `list` row. */
function toInfo(row: InfoRow, userId: string, agentColumnValue: string): WorkingEntryInfo {
  const info: WorkingEntryInfo = {
    key: row[0],
    userId,
    storedAt: row[1],
    expiresAt: row[2],
    tags: JSON.parse(row[4]) as string[],
    version: row[5],
  };
  const agentId = agentOf(agentColumnValue);
  if (agentId !== undefined) info.agentId = agentId;
  if (row[3] !== null) info.category = row[3];
  return info;
}

function toRow(entry: WorkingEntry) {
  const search = analyze(workingText(entry));
  return {
    userId: entry.userId,
    agentId: agentColumn(entry.agentId),
    key: entry.key,
    namespace: namespaceOf(entry.key),
    value: entry.value,
    storedAt: entry.storedAt,
    expiresAt: entry.expiresAt,
    expiresMs: Date.parse(entry.expiresAt),
    category: entry.category ?? null,
    tags: entry.tags,
    version: entry.version,
    searchTerms: search.terms,
    searchLength: search.length,
  };
}

const inPartition = (scope: Scope): SQL =>
  and(eq(working.userId, scope.userId), eq(working.agentId, agentColumn(scope.agentId)))!;

/**
 * Working memory in `kioku_working`, one row per key. An entry is live while `expires_ms` is after the
 * clock's now: reads filter on it, a write sweeps the expired entries of its key root, and `sweep()`
 * deletes every expired row. The per-namespace cap is enforced in the same transaction as the insert.
 */
export class SqliteWorkingMemoryStore extends SqliteStoreBase implements WorkingMemoryStore {
  readonly #limits: WorkingLimits;
  /** The inventory reads of every turn, built and prepared once on first use (see the fact store's). */
  #prepared: ReturnType<SqliteWorkingMemoryStore['buildStatements']> | undefined;

  constructor(options: SqliteWorkingMemoryOptions) {
    super(options);
    this.#limits = workingLimits(options);
  }

  private buildStatements() {
    const raw = this.connection.raw;
    // The live entries of a partition, oldest first, as arrays (no value: an inventory never shows them).
    const list = (where: string) =>
      raw
        .prepare(
          `SELECT key, stored_at, expires_at, category, tags, version FROM kioku_working
           WHERE user_id = ? AND agent_id = ? AND expires_ms > ?${where} ORDER BY stored_at, seq`,
        )
        .raw(true);
    // keyUnder with parameters: the prefix itself, or a key in [prefix/, prefix0).
    return { list: list(''), listUnder: list(' AND (key = ? OR (key >= ? AND key < ?))') };
  }

  get #statements() {
    this.#prepared ??= this.buildStatements();
    return this.#prepared;
  }

  async set(
    scope: Scope,
    key: string,
    value: string,
    options: WorkingSetOptions = {},
  ): Promise<WorkingEntry> {
    const s = parseScope(scope);
    const now = this.clock.now();
    const set = newWorkingSet(s, key, value, options, now, this.#limits.defaultTtlMs);
    const namespace = namespaceOf(key);
    return this.write(() => {
      const live = this.orm
        .select({ version: working.version })
        .from(working)
        .where(and(inPartition(s), eq(working.key, key), gt(working.expiresMs, now)))
        .get();
      // Checked first: a stale write changes nothing, not even the namespace's evictions.
      const entry = versionedWorkingEntry(set, live);
      const others = and(
        inPartition(s),
        eq(working.namespace, namespace),
        ne(working.key, key),
        gt(working.expiresMs, now),
      );
      const liveOthers = this.orm.select({ n: count() }).from(working).where(others).get()?.n ?? 0;
      const evict = namespaceEvictions(namespace, liveOthers, this.#limits);
      this.orm
        .delete(working)
        .where(and(inPartition(s), keyUnder(working.key, keyRootOf(key)), lte(working.expiresMs, now)))
        .run();
      if (evict > 0) {
        // Oldest first: insertion order, where an overwrite counts as a new insertion.
        const oldest = this.orm
          .select({ seq: working.seq })
          .from(working)
          .where(others)
          .orderBy(asc(working.seq))
          .limit(evict);
        this.orm.delete(working).where(inArray(working.seq, oldest)).run();
      }
      this.orm
        .delete(working)
        .where(and(inPartition(s), eq(working.key, key)))
        .run();
      this.orm.insert(working).values(toRow(entry)).run();
      return entry;
    });
  }

  async get(scope: Scope, key: string): Promise<WorkingEntry | null> {
    const s = parseScope(scope);
    parseOrThrow(WorkingKeySchema, key, 'working-memory key');
    const now = this.clock.now();
    const row = this.read(() =>
      this.orm
        .select()
        .from(working)
        .where(and(inPartition(s), eq(working.key, key), gt(working.expiresMs, now)))
        .get(),
    );
    return row ? toEntry(row) : null;
  }

  async list(scope: Scope, prefix?: string): Promise<WorkingEntryInfo[]> {
    const s = checkScope(scope);
    if (prefix !== undefined) checkPrefix(prefix);
    const now = this.clock.now();
    const agentId = agentColumn(s.agentId);
    const rows = this.readOne(
      () =>
        (prefix
          ? this.#statements.listUnder.all(s.userId, agentId, now, prefix, `${prefix}/`, `${prefix}0`)
          : this.#statements.list.all(s.userId, agentId, now)) as InfoRow[],
    );
    const out: WorkingEntryInfo[] = new Array(rows.length);
    for (let i = 0; i < rows.length; i++) out[i] = toInfo(rows[i]!, s.userId, agentId);
    return out;
  }

  async search(scope: Scope, query: WorkingQuery): Promise<WorkingHit[]> {
    const s = parseScope(scope);
    const q = parseOrThrow(WorkingQuerySchema, query, 'working-memory query');
    const now = this.clock.now();
    const where = and(
      inPartition(s),
      gt(working.expiresMs, now),
      q.prefix ? keyUnder(working.key, q.prefix) : undefined,
      q.category === undefined
        ? undefined
        : and(isNotNull(working.category), categoryUnder(working.category, q.category)),
      hasAllTags(working.tags, q.tags),
    )!;
    return this.read(() => {
      if (!q.query?.trim()) {
        return this.orm
          .select()
          .from(working)
          .where(where)
          .orderBy(desc(working.storedAt), desc(working.seq))
          .limit(q.limit)
          .all()
          .map((row) => ({ entry: toEntry(row), score: 0 }));
      }
      const target = { table: working, scope: scopeToken(s.userId, agentColumn(s.agentId)), where };
      const ranked = this.lexical.search(target, q.query, q.limit);
      if (ranked.length === 0) return [];
      const rows = new Map(
        this.orm
          .select()
          .from(working)
          .where(
            inArray(
              working.seq,
              ranked.map((r) => r.seq),
            ),
          )
          .all()
          // The partition is checked here: in SQL it would tempt SQLite to scan the partition's index.
          .filter((row) => row.userId === s.userId && row.agentId === agentColumn(s.agentId))
          .map((row) => [row.seq, row]),
      );
      return ranked.flatMap((r) => {
        const row = rows.get(r.seq);
        return row ? [{ entry: toEntry(row), score: r.score }] : [];
      });
    });
  }

  async delete(scope: Scope, key: string, options?: WriteOptions): Promise<boolean> {
    const s = parseScope(scope);
    parseOrThrow(WorkingKeySchema, key, 'working-memory key');
    const { expectedVersion } = parseWriteOptions(options);
    const now = this.clock.now();
    return this.write(() => {
      if (expectedVersion !== undefined) {
        const live = this.orm
          .select({ version: working.version })
          .from(working)
          .where(and(inPartition(s), eq(working.key, key), gt(working.expiresMs, now)))
          .get();
        checkWorkingVersion(key, live?.version ?? 0, expectedVersion);
      }
      const removed = this.orm
        .delete(working)
        .where(and(inPartition(s), eq(working.key, key)))
        .returning({ expiresMs: working.expiresMs })
        .all();
      return removed.some((r) => r.expiresMs > now);
    });
  }

  async sweep(): Promise<number> {
    const now = this.clock.now();
    return this.write(() => this.orm.delete(working).where(lte(working.expiresMs, now)).run().changes);
  }

  async eraseUser(userId: string): Promise<string[]> {
    return this.eraseAll(userId, () =>
      this.orm
        .delete(working)
        .where(eq(working.userId, userId))
        .returning({ key: working.key, expiresMs: working.expiresMs })
        .all()
        // Expired entries go too, but only live ones are named (as snapshot and the other stores do).
        .filter((r) => r.expiresMs > this.clock.now())
        .map((r) => r.key),
    );
  }

  async snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<WorkingEntry>> {
    const now = this.clock.now();
    return this.snapshotOf('working', selector, (userId) =>
      this.orm
        .select()
        .from(working)
        .where(and(userId === undefined ? undefined : eq(working.userId, userId), gt(working.expiresMs, now)))
        .orderBy(asc(working.userId), asc(working.agentId), asc(working.seq))
        .all()
        .map(toEntry),
    );
  }

  /** Replaces, per user + agent, the key roots (`session`, `patrol`, …) the snapshot has live entries in. */
  async restore(snapshot: unknown, options: RestoreOptions = {}): Promise<RestoreReport> {
    const now = this.clock.now();
    return this.restoreFrom('working', WorkingEntrySchema, snapshot, options, {
      userIdOf: (e) => e.userId,
      partitionOf: (e) => `${e.userId}/${agentColumn(e.agentId)}/${keyRootOf(e.key)}`,
      idOf: (e) => e.key,
      keep: (e) => isWorkingEntryLive(e, now),
      replace: (records) => {
        const first = records[0]!;
        this.orm
          .delete(working)
          .where(and(inPartition(first), keyUnder(working.key, keyRootOf(first.key))))
          .run();
        for (const entry of records) this.orm.insert(working).values(toRow(entry)).run();
      },
    });
  }
}
