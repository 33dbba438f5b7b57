import type { Scope, WorkingEntry } from '@kioku/core';
import {
  checkWorkingVersion,
  isWorkingEntryLive,
  keyRootOf,
  makeEnvelope,
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
import { and, asc, count, desc, eq, getTableColumns, gt, lte, ne, type SQL, sql } from 'drizzle-orm';
import { groupByPartition, parseSnapshot, selectedUser } from './snapshot.js';
import { agentField, agentKey, batches, hasAllTags, tagKeys, underPrefix, withoutNulls } from './sql.js';
import { PostgresStore, type PostgresStoreOptions } from './store.js';

/** Advisory-lock gate of working memory: set() holds it shared (plus its namespace), restore() exclusively. */
const WORKING_GATE = 'working';

type ListRow = Awaited<
  ReturnType<ReturnType<PostgresWorkingMemoryStore['buildListUnder']>['execute']>
>[number];

interface Listing {
  prefixes: Set<string>;
  rows?: Promise<ListRow[]>;
}

export type PostgresWorkingMemoryOptions = PostgresStoreOptions & Omit<WorkingMemoryOptions, 'clock'>;

/**
 * WorkingMemoryStore on PostgreSQL: a row per entry in `working_entries` with an `expires_at` column.
 * Reads never return a row whose `expires_at` is not after the clock's now; `sweep()` deletes them.
 * Writers of one namespace (user + agent + first two key segments) take turns on an advisory lock, so the
 * per-namespace cap holds with any number of processes.
 */
export class PostgresWorkingMemoryStore extends PostgresStore implements WorkingMemoryStore {
  readonly #limits: WorkingLimits;
  /**
   * The inventories of namespaces, which working memory lists every turn (the session's and the patrol
   * findings'), built once and run as a prepared statement, as the fact store's hot reads.
   */
  #listUnder: ReturnType<PostgresWorkingMemoryStore['buildListUnder']> | undefined;
  /** Prefixes listed in the same tick, per partition: one statement reads them all (see `list`). */
  readonly #listing = new Map<string, Listing>();

  constructor(options: PostgresWorkingMemoryOptions) {
    super(options);
    this.#limits = workingLimits(options);
  }

  private buildListUnder() {
    const t = this.tables.workingEntries;
    const p = sql.placeholder;
    const { value: _value, ...columns } = this.#columns;
    return this.database.db
      .select(columns)
      .from(t)
      .where(
        and(
          eq(t.userId, p('userId')),
          eq(t.agentId, p('agentId')),
          gt(t.expiresAt, p('now')),
          sql`(${t.key} = any(${p('prefixes')}::text[])
            or exists (select 1 from unnest(${p('belows')}::text[]) as b where starts_with(${t.key}, b)))`,
        ),
      )
      .orderBy(asc(t.storedAt), asc(t.seq))
      .prepare('kioku_working_list_under');
  }

  async set(
    scope: Scope,
    key: string,
    value: string,
    options: WorkingSetOptions = {},
  ): Promise<WorkingEntry> {
    const s = parseScope(scope);
    const nowMs = this.clock.now();
    const set = newWorkingSet(s, key, value, options, nowMs, this.#limits.defaultTtlMs);
    const namespace = namespaceOf(key);
    const now = set.entry.storedAt;
    const t = this.tables.workingEntries;
    return this.database.lockedTransaction(WORKING_GATE, this.#lockOf(s, namespace), async (tx) => {
      // Every writer of this key holds the namespace's lock, so the version read here is the one replaced.
      const [live] = await tx
        .select({ version: t.version })
        .from(t)
        .where(and(this.#partition(s), eq(t.key, key), gt(t.expiresAt, now)));
      // Checked first: a stale write changes nothing, not even the namespace's evictions.
      const entry = versionedWorkingEntry(set, live);
      const others = and(
        this.#partition(s),
        eq(t.namespace, namespace),
        ne(t.key, key),
        gt(t.expiresAt, now),
      );
      const [{ live: liveOthers = 0 } = {}] = await tx.select({ live: count() }).from(t).where(others);
      const evict = namespaceEvictions(namespace, liveOthers, this.#limits);
      // In one statement, all within the namespace whose lock this transaction holds: its expired entries,
      // the key itself (re-inserted below, so it moves to the end) and the oldest live entries beyond the cap.
      await tx
        .delete(t)
        .where(
          and(
            this.#partition(s),
            eq(t.namespace, namespace),
            sql`(${t.expiresAt} <= ${now} or ${t.key} = ${key}${
              evict > 0
                ? sql` or ${t.key} in (${tx
                    .select({ key: t.key })
                    .from(t)
                    .where(others)
                    .orderBy(asc(t.seq))
                    .limit(evict)})`
                : sql``
            })`,
          ),
        );
      await tx.insert(t).values(toRow(entry));
      return entry;
    });
  }

  async get(scope: Scope, key: string): Promise<WorkingEntry | null> {
    const s = parseScope(scope);
    parseOrThrow(WorkingKeySchema, key, 'working-memory key');
    const t = this.tables.workingEntries;
    const rows = await this.database.run((db) =>
      db
        .select(this.#columns)
        .from(t)
        .where(and(this.#live(s), eq(t.key, key))),
    );
    return rows[0] ? toEntry(rows[0]) : null;
  }

  /**
   * Lists under a prefix that start in the same tick for the same partition (working memory's two
   * inventories, read together every turn) share one statement, which reads the entries under any of them;
   * each list gets those under its own prefix, in the same order.
   */
  async list(scope: Scope, prefix?: string): Promise<WorkingEntryInfo[]> {
    const s = parseScope(scope);
    if (prefix !== undefined) parseOrThrow(WorkingPrefixSchema, prefix, 'working-memory prefix');
    if (prefix !== undefined) return this.#listUnderPrefix(s, prefix);
    const t = this.tables.workingEntries;
    const { value: _value, ...columns } = this.#columns;
    const rows = await this.database.run((db) =>
      db.select(columns).from(t).where(this.#live(s)).orderBy(asc(t.storedAt), asc(t.seq)),
    );
    return rows.map(toInfo);
  }

  #listUnderPrefix(s: Scope, prefix: string): Promise<WorkingEntryInfo[]> {
    const partition = `${s.userId}\u0000${agentKey(s.agentId)}`;
    let listing = this.#listing.get(partition);
    if (!listing) {
      const started: Listing = { prefixes: new Set() };
      listing = started;
      this.#listing.set(partition, started);
      started.rows = Promise.resolve().then(() => {
        this.#listing.delete(partition);
        const prefixes = [...started.prefixes];
        return this.database.run(() => {
          this.#listUnder ??= this.buildListUnder();
          return this.#listUnder.execute({
            userId: s.userId,
            agentId: agentKey(s.agentId),
            now: this.#now(),
            prefixes,
            belows: prefixes.map((p) => `${p}/`),
          });
        });
      });
    }
    listing.prefixes.add(prefix);
    const below = `${prefix}/`;
    return listing.rows!.then((rows) =>
      rows.filter((row) => row.key === prefix || row.key.startsWith(below)).map(toInfo),
    );
  }

  async search(scope: Scope, query: WorkingQuery): Promise<WorkingHit[]> {
    const s = parseScope(scope);
    const q = parseOrThrow(WorkingQuerySchema, query, 'working-memory query');
    const t = this.tables.workingEntries;
    const where = and(
      this.#live(s),
      q.prefix === undefined ? undefined : underPrefix(t.key, q.prefix),
      q.category === undefined ? undefined : underPrefix(t.category, q.category),
      hasAllTags(t.tagKeys, q.tags),
    );
    if (!q.query?.trim()) {
      const rows = await this.database.run((db) =>
        db.select(this.#columns).from(t).where(where).orderBy(desc(t.storedAt), asc(t.seq)).limit(q.limit),
      );
      return rows.map((row) => ({ entry: toEntry(row), score: 0 }));
    }
    const match = await this.match(t.search, q.query);
    if (!match) return [];
    const rows = await this.database.run((db) =>
      db
        .select({ ...this.#columns, score: match.score })
        .from(t)
        .where(and(where, match.where))
        .orderBy(desc(match.score), asc(t.seq))
        .limit(q.limit),
    );
    return rows.map(({ score, ...row }) => ({ entry: toEntry(row), score }));
  }

  /**
   * Holds the key's namespace lock, as `set` does, so a delete never lands between a `set`'s version check
   * and its write.
   */
  async delete(scope: Scope, key: string, options?: WriteOptions): Promise<boolean> {
    const s = parseScope(scope);
    parseOrThrow(WorkingKeySchema, key, 'working-memory key');
    const { expectedVersion } = parseWriteOptions(options);
    const t = this.tables.workingEntries;
    const now = this.#now();
    return this.database.lockedTransaction(WORKING_GATE, this.#lockOf(s, namespaceOf(key)), async (tx) => {
      // An expired entry is deleted too, but reported as not there (it already was not, to readers).
      const rows = await tx
        .delete(t)
        .where(and(this.#partition(s), eq(t.key, key)))
        .returning({ live: sql<boolean>`${t.expiresAt} > ${now}`, version: t.version });
      const live = rows[0]?.live === true;
      // Thrown inside the transaction, so a refused delete is rolled back.
      checkWorkingVersion(key, live ? rows[0]!.version : 0, expectedVersion);
      return live;
    });
  }

  /**
   * Deletes every expired row. Rows a concurrent set() is deleting right now are skipped (`SKIP LOCKED`),
   * so a sweep never waits on, or deadlocks with, a writer; they are gone when that writer commits.
   */
  async sweep(): Promise<number> {
    const t = this.tables.workingEntries;
    const now = this.#now();
    const expired = sql`(select ${t.userId}, ${t.agentId}, ${t.key} from ${t} where ${lte(t.expiresAt, now)} for update skip locked)`;
    const rows = await this.database.run((db) =>
      db.delete(t).where(sql`(${t.userId}, ${t.agentId}, ${t.key}) in ${expired}`).returning({ key: t.key }),
    );
    return rows.length;
  }

  /** One statement. */
  async eraseUser(userId: string): Promise<string[]> {
    selectedUser({ userId });
    const t = this.tables.workingEntries;
    const rows = await this.database.run((db) =>
      db.delete(t).where(eq(t.userId, userId)).returning({ key: t.key, expiresAt: t.expiresAt }),
    );
    // Expired entries go too, but only live ones are named (as snapshot and the other stores do).
    const now = this.clock.now();
    return rows.filter((r) => isWorkingEntryLive(r, now)).map((r) => r.key);
  }

  async snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<WorkingEntry>> {
    const { parsed, userId } = selectedUser(selector);
    const t = this.tables.workingEntries;
    const rows = await this.database.run((db) =>
      db
        .select(this.#columns)
        .from(t)
        .where(and(gt(t.expiresAt, this.#now()), userId === undefined ? undefined : eq(t.userId, userId)))
        .orderBy(asc(t.userId), asc(t.agentId), asc(t.root), asc(t.seq)),
    );
    return makeEnvelope('working', parsed, rows.map(toEntry), this.clock);
  }

  /**
   * Replaces every (user, agent, key root) partition that the snapshot's live entries fall in, in one
   * transaction; entries already expired are not restored (as in core's stores).
   */
  async restore(snapshot: unknown, options: RestoreOptions = {}): Promise<RestoreReport> {
    const records = parseSnapshot('working', WorkingEntrySchema, snapshot, options, (e) => e.userId);
    const nowMs = this.clock.now();
    const groups = groupByPartition(
      records.filter((e) => isWorkingEntryLive(e, nowMs)),
      (e) => ({ userId: e.userId, agentId: e.agentId, root: keyRootOf(e.key) }),
      (p) => `${p.userId}|${agentKey(p.agentId)}|${p.root}`,
      (e) => e.key,
    );
    const t = this.tables.workingEntries;
    // Exclusive: no set() of any namespace runs (with a stale count) while partitions are replaced.
    await this.database.lockedTransaction(WORKING_GATE, undefined, async (tx) => {
      for (const { partition, records: entries } of groups) {
        await tx.delete(t).where(and(this.#partition(partition), eq(t.root, partition.root)));
        for (const batch of batches(entries)) await tx.insert(t).values(batch.map(toRow));
      }
    });
    return { records: records.length, partitions: groups.length };
  }

  #now(): string {
    return new Date(this.clock.now()).toISOString();
  }

  /** The advisory lock of a namespace: writers of its keys take turns on it. */
  #lockOf(scope: Scope, namespace: string): string {
    return `${scope.userId}|${agentKey(scope.agentId)}|${namespace}`;
  }

  get #columns() {
    const {
      search: _search,
      tagKeys: _tagKeys,
      seq: _seq,
      namespace: _namespace,
      root: _root,
      ...columns
    } = getTableColumns(this.tables.workingEntries);
    return columns;
  }

  #partition(scope: { userId: string; agentId?: string | undefined }): SQL {
    const t = this.tables.workingEntries;
    return and(eq(t.userId, scope.userId), eq(t.agentId, agentKey(scope.agentId)))!;
  }

  #live(scope: Scope): SQL {
    return and(this.#partition(scope), gt(this.tables.workingEntries.expiresAt, this.#now()))!;
  }
}

function toRow(entry: WorkingEntry) {
  return {
    userId: entry.userId,
    agentId: agentKey(entry.agentId),
    key: entry.key,
    value: entry.value,
    category: entry.category ?? null,
    tags: entry.tags,
    tagKeys: tagKeys(entry.tags),
    storedAt: entry.storedAt,
    expiresAt: entry.expiresAt,
    version: entry.version,
  };
}

function toInfo({ agentId, ...row }: ListRow): WorkingEntryInfo {
  return { ...withoutNulls(row), ...agentField(agentId) };
}

function toEntry(row: Omit<ReturnType<typeof toRow>, 'tagKeys'>): WorkingEntry {
  const { agentId, ...rest } = row;
  return { ...withoutNulls(rest), ...agentField(agentId) };
}
