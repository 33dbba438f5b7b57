import type { ChatMessage, Scope, SessionInfo, TranscriptEntry } from '@kioku/core';
import {
  checkKvVersion,
  isoAt,
  makeEnvelope,
  newKvSet,
  newSession,
  newTranscriptEntries,
  parseOrThrow,
  parseScope,
  parseWriteOptions,
  pendingMark,
  pendingQuery,
  type SessionCaps,
  type SessionStoreOptions,
  sessionCaps,
  sessionKey,
  sessionNotFoundError,
  transcriptAppendOptions,
  transcriptReadCount,
  versionedKvEntry,
} from '@kioku/core/adapter';
import {
  type KvEntry,
  KvKeySchema,
  type PendingQuery,
  type PendingSession,
  type RestoreOptions,
  type RestoreReport,
  type SessionCreateOptions,
  type SessionRecord,
  SessionRecordSchema,
  type SessionStore,
  type SnapshotEnvelope,
  type SnapshotSelector,
  type TranscriptAppendOptions,
  type UpsertOptions,
  type WriteOptions,
} from '@kioku/core/store';
import { and, asc, eq, type SQL, sql } from 'drizzle-orm';
import type { Tx } from './database.js';
import { type SessionStatements, sessionStatements } from './session-sql.js';
import { groupByPartition, parseSnapshot, selectedUser } from './snapshot.js';
import { agentField, agentKey, batches, withoutNulls } from './sql.js';
import { PostgresStore, type PostgresStoreOptions } from './store.js';
import { isoFromPg } from './timestamp.js';

export type PostgresSessionStoreOptions = PostgresStoreOptions & Omit<SessionStoreOptions, 'clock'>;

type Owner = { userId: string; agentId?: string | undefined };

/**
 * SessionStore on PostgreSQL: the session index in `sessions`, each session's k-v entries in `session_kv`
 * (an `ord` column: an update moves the key to the end) and its transcript in `session_transcript`
 * (`seq` 1, 2, …). A write to a session's data locks the session's row (`SELECT … FOR UPDATE`), so caps and
 * order hold with any number of writers; deleting a session cascades to its data.
 */
export class PostgresSessionStore extends PostgresStore implements SessionStore {
  readonly #caps: SessionCaps;
  /**
   * The reads a turn runs (a k-v entry, the transcript's end), built once and run as prepared statements,
   * as the fact store's: drizzle builds the SQL text again on every call otherwise, and the server parses
   * and plans an unnamed statement on every call.
   */
  #prepared: ReturnType<PostgresSessionStore['buildStatements']> | undefined;
  /** The writes a turn runs, as SQL text (see session-sql.ts). */
  readonly #sql: SessionStatements;

  constructor(options: PostgresSessionStoreOptions) {
    super(options);
    this.#caps = sessionCaps(options);
    this.#sql = sessionStatements(this.database.schema);
  }

  private buildStatements() {
    const { sessions: t, sessionKv: kv } = this.tables;
    const p = sql.placeholder;
    const db = this.database.db;
    return {
      kvGet: db
        .select(this.#kvColumns)
        .from(t)
        .leftJoin(kv, and(this.#dataOf(kv), eq(kv.key, p('key'))))
        .where(and(eq(t.userId, p('userId')), eq(t.agentId, p('agentId')), eq(t.id, p('id'))))
        .prepare('kioku_sessions_kv_get'),
    };
  }

  get #statements() {
    this.#prepared ??= this.buildStatements();
    return this.#prepared;
  }

  async create(scope: Scope, options: SessionCreateOptions = {}): Promise<SessionInfo> {
    const s = parseScope(scope);
    const session = newSession(s, options, this.clock.now());
    // Named statements here and below: drizzle's unnamed ones wait a round trip to be described first.
    await this.database.run((db) =>
      db
        .insert(this.tables.sessions)
        .values(toSessionRow(session))
        .prepare('kioku_sessions_create')
        .execute(),
    );
    return session;
  }

  async get(scope: Scope, sessionId: string): Promise<SessionInfo | null> {
    const s = parseScope(scope);
    const id = sessionKey(sessionId);
    const t = this.tables.sessions;
    const columns = this.#sessionColumns;
    const rows = await this.database.run((db) =>
      db.select(columns).from(t).where(this.#session(s, id)).prepare('kioku_sessions_get').execute(),
    );
    return rows[0] ? toSession(rows[0]) : null;
  }

  async list(scope: Scope): Promise<SessionInfo[]> {
    const s = parseScope(scope);
    const t = this.tables.sessions;
    const columns = this.#sessionColumns;
    const rows = await this.database.run((db) =>
      db
        .select(columns)
        .from(t)
        .where(and(eq(t.userId, s.userId), eq(t.agentId, agentKey(s.agentId))))
        .orderBy(asc(t.seq))
        .prepare('kioku_sessions_list')
        .execute(),
    );
    return rows.map(toSession);
  }

  async delete(scope: Scope, sessionId: string): Promise<boolean> {
    const s = parseScope(scope);
    const id = sessionKey(sessionId);
    const t = this.tables.sessions;
    const rows = await this.database.run((db) =>
      db.delete(t).where(this.#session(s, id)).returning({ id: t.id }),
    );
    return rows.length > 0;
  }

  async kvGet(scope: Scope, sessionId: string, key: string): Promise<KvEntry | null> {
    const s = parseScope(scope);
    parseOrThrow(KvKeySchema, key, 'key');
    const id = sessionKey(sessionId);
    // The session row proves the session is the caller's; the k-v row may or may not be there.
    const rows = await this.database.run(() =>
      this.#statements.kvGet.execute({ userId: s.userId, agentId: agentKey(s.agentId), id, key }),
    );
    if (!rows[0]) throw sessionNotFoundError(sessionId);
    return toKvEntry(rows[0]);
  }

  /**
   * One round trip: in a transaction, the session row's update takes its lock and the next `ord`; then one
   * statement (its snapshot taken after the lock, so it sees every earlier writer) sets the key if its
   * version is the expected one and evicts past the cap, and returns the key's version either way.
   */
  async kvSet(
    scope: Scope,
    sessionId: string,
    key: string,
    value: string,
    options?: UpsertOptions,
  ): Promise<KvEntry> {
    const s = parseScope(scope);
    const set = newKvSet(key, value, isoAt(this.clock), options);
    const id = sessionKey(sessionId);
    const owner = [s.userId, agentKey(s.agentId), id];
    const [locked, written] = await this.database.run(() =>
      this.database.client.begin((tx) => [
        tx.unsafe(this.#sql.lockKv, owner as never[], { prepare: true }),
        tx.unsafe(
          this.#sql.kvSet,
          [
            ...owner,
            set.entry.key,
            set.entry.value,
            set.entry.ts,
            set.expectedVersion ?? null,
            this.#caps.kvCap,
          ] as never[],
          { prepare: true },
        ),
      ]),
    );
    if (locked.length === 0) throw sessionNotFoundError(sessionId);
    // The statement wrote exactly when the expected version matched: CONFLICT here otherwise.
    const { current } = written[0] as unknown as { current: number | null };
    return versionedKvEntry(set, current === null ? undefined : { version: current });
  }

  async kvDelete(scope: Scope, sessionId: string, key: string, options?: WriteOptions): Promise<boolean> {
    const s = parseScope(scope);
    parseOrThrow(KvKeySchema, key, 'key');
    const { expectedVersion } = parseWriteOptions(options);
    const id = sessionKey(sessionId);
    const kv = this.tables.sessionKv;
    return this.#write(s, id, sessionId, async (tx, session) => {
      const ofKey = and(this.#dataOf(kv, session), eq(kv.key, key));
      if (expectedVersion !== undefined) {
        const [current] = await tx.select({ version: kv.version }).from(kv).where(ofKey);
        checkKvVersion(key, current?.version ?? 0, expectedVersion);
      }
      const rows = await tx.delete(kv).where(ofKey).returning({ key: kv.key });
      return rows.length > 0;
    });
  }

  async kvList(scope: Scope, sessionId: string): Promise<KvEntry[]> {
    const s = parseScope(scope);
    const id = sessionKey(sessionId);
    const { sessions: t, sessionKv: kv } = this.tables;
    const rows = await this.database.run((db) =>
      db
        .select(this.#kvColumns)
        .from(t)
        .leftJoin(kv, this.#dataOf(kv))
        .where(this.#session(s, id))
        .orderBy(asc(kv.ord))
        // Named, prepared once per connection (read every turn: drizzle's unnamed statement would take a
        // round trip of its own to be parsed and described first).
        .prepare('kioku_session_kv_list')
        .execute(),
    );
    if (!rows[0]) throw sessionNotFoundError(sessionId);
    return rows.flatMap((r) => toKvEntry(r) ?? []);
  }

  /**
   * One statement: the session row's update takes its lock, moves its transcript position on (and the
   * pending mark, with `pending`), and the entries take the positions after it; entries past the cap go
   * by position. A turn id the session holds already fails the statement on the unique index, so nothing
   * of it (not the position, not the mark) is written.
   */
  async transcriptAppend(
    scope: Scope,
    sessionId: string,
    entries: ChatMessage | ChatMessage[],
    options?: TranscriptAppendOptions,
  ): Promise<TranscriptEntry[]> {
    const s = parseScope(scope);
    const ts = isoAt(this.clock);
    const { turnId, pending } = transcriptAppendOptions(options);
    const parsed = newTranscriptEntries(entries, ts, { turnId });
    const id = sessionKey(sessionId);
    const cap = this.#caps.transcriptCap;
    // A batch larger than the cap keeps its last entries: the others are never written.
    const kept = parsed.slice(-cap);
    const rows = kept.map((e, i) => ({
      n: i + 1,
      role: e.role,
      content: e.content,
      tool_calls: e.toolCalls ?? null,
      tool_call_id: e.toolCallId ?? null,
      name: e.name ?? null,
      turn_id: i === 0 ? (turnId ?? null) : null,
    }));
    try {
      const result = await this.database.run(() =>
        this.database.client.unsafe(
          this.#sql.append,
          [
            s.userId,
            agentKey(s.agentId),
            id,
            kept.length,
            pending && kept.length > 0 ? 1 : 0,
            ts,
            JSON.stringify(rows),
            cap,
          ] as never[],
          { prepare: true },
        ),
      );
      if (result.length === 0) throw sessionNotFoundError(sessionId);
    } catch (error) {
      if (turnId !== undefined && isDuplicateTurn(error)) return [];
      throw error;
    }
    return parsed;
  }

  async transcriptReadLast(scope: Scope, sessionId: string, n: number): Promise<TranscriptEntry[]> {
    const s = parseScope(scope);
    const count = transcriptReadCount(n);
    const id = sessionKey(sessionId);
    if (count === 0) {
      if (!(await this.get(s, id))) throw sessionNotFoundError(sessionId);
      return [];
    }
    const rows = (await this.database.run(() =>
      this.database.client.unsafe(
        this.#sql.transcriptLast,
        [s.userId, agentKey(s.agentId), id, count] as never[],
        {
          prepare: true,
        },
      ),
    )) as unknown as RawTranscriptRow[];
    if (rows.length === 0) throw sessionNotFoundError(sessionId);
    // A session without entries: one row of nulls (an entry always has a role).
    if (rows[0]!.role === null) return [];
    return rows
      .sort((a, b) => Number(a.seq) - Number(b.seq))
      .map((row) =>
        toTranscriptEntry({
          role: row.role as TranscriptRow['role'],
          content: row.content,
          toolCalls: row.tool_calls === null ? null : JSON.parse(row.tool_calls),
          toolCallId: row.tool_call_id,
          name: row.name,
          ts: isoFromPg(row.ts),
          turnId: row.turn_id,
        }),
      );
  }

  async listPending(query?: PendingQuery): Promise<PendingSession[]> {
    const { scope, limit } = pendingQuery(query);
    const rows = (await this.database.run(() =>
      scope
        ? this.database.client.unsafe(
            this.#sql.pendingOf,
            [scope.userId, agentKey(scope.agentId), limit] as never[],
            { prepare: true },
          )
        : this.database.client.unsafe(this.#sql.pending, [limit] as never[], { prepare: true }),
    )) as unknown as Array<{ user_id: string; agent_id: string; id: string; mark: string; since: string }>;
    return rows.map((r) => ({
      userId: r.user_id,
      ...agentField(r.agent_id),
      sessionId: r.id,
      mark: Number(r.mark),
      since: isoFromPg(r.since),
    }));
  }

  async clearPending(scope: Scope, sessionId: string, mark: number): Promise<boolean> {
    const s = parseScope(scope);
    const at = pendingMark(mark);
    const rows = await this.database.run(() =>
      this.database.client.unsafe(
        this.#sql.clearPending,
        [s.userId, agentKey(s.agentId), sessionKey(sessionId), at, this.#caps.transcriptCap] as never[],
        { prepare: true },
      ),
    );
    return rows.length > 0;
  }

  /** One statement (k-v entries and transcripts go by the foreign keys' cascade). */
  async eraseUser(userId: string): Promise<string[]> {
    selectedUser({ userId });
    const t = this.tables.sessions;
    const rows = await this.database.run((db) =>
      db.delete(t).where(eq(t.userId, userId)).returning({ id: t.id }),
    );
    return rows.map((r) => r.id);
  }

  async snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<SessionRecord>> {
    const { parsed, userId } = selectedUser(selector);
    const { sessions: t, sessionKv: kv, sessionTranscript: tr } = this.tables;
    const columns = this.#sessionColumns;
    const records = await this.database.run(async (db) => {
      // One consistent view of the three tables.
      return db.transaction(
        async (tx) => {
          const sessions = await tx
            .select(columns)
            .from(t)
            .where(userId === undefined ? undefined : eq(t.userId, userId))
            .orderBy(asc(t.userId), asc(t.agentId), asc(t.seq));
          const kvRows = await tx
            .select({
              userId: kv.userId,
              agentId: kv.agentId,
              sessionId: kv.sessionId,
              ...this.#kvColumns,
            })
            .from(kv)
            .where(userId === undefined ? undefined : eq(kv.userId, userId))
            .orderBy(asc(kv.ord));
          const transcriptRows = await tx
            .select({
              ...this.#transcriptColumns,
              userId: tr.userId,
              agentId: tr.agentId,
              sessionId: tr.sessionId,
            })
            .from(tr)
            .where(userId === undefined ? undefined : eq(tr.userId, userId))
            .orderBy(asc(tr.seq));
          const keyOf = (r: { userId: string; agentId: string; sessionId: string }) =>
            `${r.userId}|${r.agentId}|${r.sessionId}`;
          const data = new Map<string, { kv: KvEntry[]; transcript: TranscriptEntry[] }>();
          const dataOf = (r: { userId: string; agentId: string; sessionId: string }) => {
            const key = keyOf(r);
            const found = data.get(key);
            if (found) return found;
            const created: { kv: KvEntry[]; transcript: TranscriptEntry[] } = { kv: [], transcript: [] };
            data.set(key, created);
            return created;
          };
          for (const { userId: u, agentId: a, sessionId: sid, ...entry } of kvRows)
            dataOf({ userId: u, agentId: a, sessionId: sid }).kv.push(entry);
          for (const { userId: u, agentId: a, sessionId: sid, ...entry } of transcriptRows)
            dataOf({ userId: u, agentId: a, sessionId: sid }).transcript.push(toTranscriptEntry(entry));
          return sessions.map((row) => ({
            session: toSession(row),
            ...(data.get(keyOf({ ...row, sessionId: row.id })) ?? { kv: [], transcript: [] }),
          }));
        },
        { isolationLevel: 'repeatable read', accessMode: 'read only' },
      );
    });
    return makeEnvelope('sessions', parsed, records, this.clock);
  }

  /**
   * Replaces the session index of every (user, agent) the snapshot contains, with each session's k-v
   * entries and transcript, in one transaction (sessions not in the snapshot go, with their data).
   */
  async restore(snapshot: unknown, options: RestoreOptions = {}): Promise<RestoreReport> {
    const records = parseSnapshot(
      'sessions',
      SessionRecordSchema,
      snapshot,
      options,
      (r) => r.session.userId,
    );
    const groups = groupByPartition(
      records,
      (r): Owner => ({ userId: r.session.userId, agentId: r.session.agentId }),
      (p) => `${p.userId}|${agentKey(p.agentId)}`,
      (r) => r.session.id.toLowerCase(),
    );
    const { sessions: t, sessionKv: kv, sessionTranscript: tr } = this.tables;
    // Restores of sessions take turns: two replacing overlapping partitions could otherwise deadlock.
    await this.database.lockedTransaction('sessions-restore', undefined, async (tx) => {
      for (const { partition, records: group } of groups) {
        await tx
          .delete(t)
          .where(and(eq(t.userId, partition.userId), eq(t.agentId, agentKey(partition.agentId))));
        for (const batch of batches(group)) {
          await tx.insert(t).values(
            batch.map((r) => ({
              ...toSessionRow({ ...r.session, id: r.session.id.toLowerCase() }),
              // The positions the restored k-v entries and transcript entries take (1, 2, …).
              transcriptSeq: r.transcript.length,
              kvOrd: r.kv.length,
            })),
          );
        }
        for (const { session, kv: entries, transcript } of group) {
          const id = session.id.toLowerCase();
          const kvRows = entries.map((e, i) => ({ ...owner(partition), sessionId: id, ...e, ord: i + 1 }));
          for (const batch of batches(kvRows)) await tx.insert(kv).values(batch);
          const transcriptRows = transcript.map((e, i) => toTranscriptRow(partition, id, i + 1, e));
          for (const batch of batches(transcriptRows)) await tx.insert(tr).values(batch);
        }
      }
    });
    // Core counts the index of each (user, agent) and the data of each session as partitions.
    return { records: records.length, partitions: groups.length + records.length };
  }

  /** Run a change to one session's data under its row lock; NOT_FOUND when the session is not the caller's. */
  #write<T>(
    s: Scope,
    id: string,
    given: string,
    change: (tx: Tx, session: Owner & { id: string }) => Promise<T>,
  ): Promise<T> {
    const t = this.tables.sessions;
    return this.database.transaction(async (tx) => {
      const locked = await tx.select({ id: t.id }).from(t).where(this.#session(s, id)).for('update');
      if (locked.length === 0) throw sessionNotFoundError(given);
      return change(tx, { ...s, id });
    });
  }

  #session(s: Owner, id: string): SQL {
    const t = this.tables.sessions;
    return and(eq(t.userId, s.userId), eq(t.agentId, agentKey(s.agentId)), eq(t.id, id))!;
  }

  /** Rows of one session in a data table: of the given session, or of the `sessions` row being read. */
  #dataOf(
    table: typeof this.tables.sessionKv | typeof this.tables.sessionTranscript,
    session?: Owner & { id: string },
  ): SQL {
    if (session) {
      return and(
        eq(table.userId, session.userId),
        eq(table.agentId, agentKey(session.agentId)),
        eq(table.sessionId, session.id),
      )!;
    }
    const t = this.tables.sessions;
    return and(eq(table.userId, t.userId), eq(table.agentId, t.agentId), eq(table.sessionId, t.id))!;
  }

  /** The columns of a session's index entry (`SessionInfo`), not its positions or pending state. */
  get #sessionColumns() {
    const t = this.tables.sessions;
    return {
      userId: t.userId,
      agentId: t.agentId,
      id: t.id,
      storeTypes: t.storeTypes,
      title: t.title,
      metadata: t.metadata,
      createdAt: t.createdAt,
    };
  }

  get #kvColumns() {
    const kv = this.tables.sessionKv;
    return { key: kv.key, value: kv.value, ts: kv.ts, version: kv.version };
  }

  get #transcriptColumns() {
    const tr = this.tables.sessionTranscript;
    return {
      role: tr.role,
      content: tr.content,
      toolCalls: tr.toolCalls,
      toolCallId: tr.toolCallId,
      name: tr.name,
      ts: tr.ts,
      turnId: tr.turnId,
    };
  }
}

/** A failed append whose turn id the session held already (the unique index on turn ids). */
function isDuplicateTurn(error: unknown): boolean {
  for (let e = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const pg = e as { code?: unknown; constraint_name?: unknown; constraint?: unknown };
    if (pg.code === '23505' && (pg.constraint_name ?? pg.constraint) === 'session_transcript_turn_idx')
      return true;
  }
  return false;
}

function owner(s: Owner) {
  return { userId: s.userId, agentId: agentKey(s.agentId) };
}

/** A k-v row of a left join (all null when the session has no such key) as core's `KvEntry`. */
function toKvEntry(row: {
  key: string | null;
  value: string | null;
  ts: string | null;
  version: number | null;
}): KvEntry | null {
  return row.key === null ? null : { key: row.key, value: row.value!, ts: row.ts!, version: row.version! };
}

function toSessionRow(session: SessionInfo) {
  return {
    ...owner(session),
    id: session.id,
    storeTypes: session.storeTypes,
    title: session.title ?? null,
    metadata: session.metadata,
    createdAt: session.createdAt,
  };
}

function toSession(row: ReturnType<typeof toSessionRow>): SessionInfo {
  const { agentId, ...rest } = row;
  return { ...withoutNulls(rest), ...agentField(agentId) };
}

function toTranscriptRow(s: Owner, sessionId: string, seq: number, entry: TranscriptEntry) {
  return {
    ...owner(s),
    sessionId,
    seq,
    role: entry.role,
    content: entry.content,
    toolCalls: entry.toolCalls ?? null,
    toolCallId: entry.toolCallId ?? null,
    name: entry.name ?? null,
    ts: entry.ts,
    turnId: entry.turnId ?? null,
  };
}

/** A row of `transcriptLast` (session-sql.ts), as PostgreSQL prints it. */
interface RawTranscriptRow {
  seq: string;
  role: string | null;
  content: string;
  tool_calls: string | null;
  tool_call_id: string | null;
  name: string | null;
  ts: string;
  turn_id: string | null;
}

type TranscriptRow = Pick<
  ReturnType<typeof toTranscriptRow>,
  'role' | 'content' | 'toolCalls' | 'toolCallId' | 'name' | 'ts' | 'turnId'
>;

function toTranscriptEntry(row: TranscriptRow): TranscriptEntry {
  return withoutNulls(row);
}
