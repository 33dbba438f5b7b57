import type { ChatMessage, Scope, SessionInfo, TranscriptEntry } from '@kioku/core';
import {
  checkKvVersion,
  isoAt,
  newKvSet,
  newSession,
  newTranscriptEntries,
  parseOrThrow,
  parseScope,
  parseWriteOptions,
  type SessionCaps,
  type SessionStoreOptions,
  sessionCaps,
  sessionKey,
  sessionNotFoundError,
  transcriptReadCount,
  versionedKvEntry,
} from '@kioku/core/adapter';
import {
  type KvEntry,
  KvKeySchema,
  type RestoreOptions,
  type RestoreReport,
  type SessionCreateOptions,
  type SessionRecord,
  SessionRecordSchema,
  type SessionStore,
  type SnapshotEnvelope,
  type SnapshotSelector,
  type UpsertOptions,
  type WriteOptions,
} from '@kioku/core/store';
import { and, asc, count, eq, inArray, max, type SQL } from 'drizzle-orm';
import { agentColumn, agentOf, checkScope, SqliteStoreBase, type SqliteStoreOptions } from './base.js';
import { sessionKv, sessions, sessionTranscript } from './schema.js';

export type SqliteSessionStoreOptions = SqliteStoreOptions & SessionStoreOptions;

type SessionRow = typeof sessions.$inferSelect;
type TranscriptRow = typeof sessionTranscript.$inferSelect;

function toSession(row: SessionRow): SessionInfo {
  const session: SessionInfo = {
    id: row.id,
    userId: row.userId,
    storeTypes: row.storeTypes,
    metadata: row.metadata,
    createdAt: row.createdAt,
  };
  const agentId = agentOf(row.agentId);
  if (agentId !== undefined) session.agentId = agentId;
  if (row.title !== null) session.title = row.title;
  return session;
}

function toTranscriptEntry(row: TranscriptRow): TranscriptEntry {
  const entry: TranscriptEntry = {
    role: row.role as TranscriptEntry['role'],
    content: row.content,
    ts: row.ts,
  };
  if (row.toolCalls !== null) entry.toolCalls = row.toolCalls as TranscriptEntry['toolCalls'];
  if (row.toolCallId !== null) entry.toolCallId = row.toolCallId;
  if (row.name !== null) entry.name = row.name;
  return entry;
}

/** `role, content, tool_calls, tool_call_id, name, ts` of a transcript row, as `last` reads it. */
type RawEntry = [string, string, string | null, string | null, string | null, string];

/** The same entry as `toTranscriptEntry` makes of the row (`tool_calls` is JSON text here). */
function rawToEntry(row: RawEntry): TranscriptEntry {
  const entry: TranscriptEntry = { role: row[0] as TranscriptEntry['role'], content: row[1], ts: row[5] };
  if (row[2] !== null) entry.toolCalls = JSON.parse(row[2]) as TranscriptEntry['toolCalls'];
  if (row[3] !== null) entry.toolCallId = row[3];
  if (row[4] !== null) entry.name = row[4];
  return entry;
}

/** A k-v row's columns as core's `KvEntry`. */
const kvColumns = {
  key: sessionKv.key,
  value: sessionKv.value,
  ts: sessionKv.ts,
  version: sessionKv.version,
};

const inPartition = (scope: Scope): SQL =>
  and(eq(sessions.userId, scope.userId), eq(sessions.agentId, agentColumn(scope.agentId)))!;

/**
 * Sessions in `kioku_sessions` (the index), each with its key-value map in `kioku_session_kv` and its
 * transcript in `kioku_session_transcript`, both ordered by a `position` column. Caps (FIFO) are
 * enforced in the transaction that writes.
 */
export class SqliteSessionStore extends SqliteStoreBase implements SessionStore {
  readonly #caps: SessionCaps;
  /**
   * The statements of every turn (a transcript read and append), built and prepared once on first use:
   * building a query with drizzle cost more than running it.
   */
  #prepared: ReturnType<SqliteSessionStore['buildStatements']> | undefined;

  constructor(options: SqliteSessionStoreOptions) {
    super(options);
    this.#caps = sessionCaps(options);
  }

  private buildStatements() {
    const raw = this.connection.raw;
    const seqOf = 'SELECT seq FROM kioku_sessions WHERE user_id = ? AND agent_id = ? AND id = ?';
    return {
      seq: raw.prepare(seqOf).pluck(),
      /**
       * The newest entries of the caller's session, newest first, in one statement (the session looked up
       * inside it, so no transaction is needed), as arrays: a row object per entry cost more than the read.
       */
      last: raw
        .prepare(
          `SELECT role, content, tool_calls, tool_call_id, name, ts FROM kioku_session_transcript
           WHERE session_seq = (${seqOf}) ORDER BY position DESC LIMIT ?`,
        )
        .raw(true),
      /** The caller's session and its newest position (null when empty); no row when there is no session. */
      head: raw
        .prepare(
          `SELECT s.seq, (SELECT max(position) FROM kioku_session_transcript WHERE session_seq = s.seq)
           FROM kioku_sessions s WHERE s.user_id = ? AND s.agent_id = ? AND s.id = ?`,
        )
        .raw(true),
      insert: raw.prepare(
        `INSERT INTO kioku_session_transcript (session_seq, position, role, content, tool_calls, tool_call_id, name, ts)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      trim: raw.prepare('DELETE FROM kioku_session_transcript WHERE session_seq = ? AND position <= ?'),
    };
  }

  get #statements() {
    this.#prepared ??= this.buildStatements();
    return this.#prepared;
  }

  async create(scope: Scope, options: SessionCreateOptions = {}): Promise<SessionInfo> {
    const s = parseScope(scope);
    const session = newSession(s, options, this.clock.now());
    this.write(() => this.#insertSession(session));
    return session;
  }

  async get(scope: Scope, sessionId: string): Promise<SessionInfo | null> {
    const s = parseScope(scope);
    return this.read(() => {
      const row = this.#session(s, sessionId);
      return row ? toSession(row) : null;
    });
  }

  async list(scope: Scope): Promise<SessionInfo[]> {
    const s = parseScope(scope);
    return this.read(() =>
      this.orm.select().from(sessions).where(inPartition(s)).orderBy(asc(sessions.seq)).all().map(toSession),
    );
  }

  async delete(scope: Scope, sessionId: string): Promise<boolean> {
    const s = parseScope(scope);
    const id = sessionKey(sessionId);
    return this.write(() => {
      const row = this.orm
        .select({ seq: sessions.seq })
        .from(sessions)
        .where(and(inPartition(s), eq(sessions.id, id)))
        .get();
      if (!row) return false;
      this.#deleteSessions([row.seq]);
      return true;
    });
  }

  async kvGet(scope: Scope, sessionId: string, key: string): Promise<KvEntry | null> {
    const s = parseScope(scope);
    parseOrThrow(KvKeySchema, key, 'key');
    return this.read(() => {
      const session = this.#requireSession(s, sessionId);
      return (
        this.orm
          .select(kvColumns)
          .from(sessionKv)
          .where(and(eq(sessionKv.sessionSeq, session.seq), eq(sessionKv.key, key)))
          .get() ?? null
      );
    });
  }

  async kvSet(
    scope: Scope,
    sessionId: string,
    key: string,
    value: string,
    options?: UpsertOptions,
  ): Promise<KvEntry> {
    const s = parseScope(scope);
    const set = newKvSet(key, value, isoAt(this.clock), options);
    return this.write(() => {
      const session = this.#requireSession(s, sessionId);
      const ofSession = eq(sessionKv.sessionSeq, session.seq);
      const current = this.orm
        .select({ version: sessionKv.version })
        .from(sessionKv)
        .where(and(ofSession, eq(sessionKv.key, key)))
        .get();
      // Checked first: a stale write changes nothing, not even the order or the evictions.
      const entry = versionedKvEntry(set, current);
      const last = this.orm
        .select({ p: max(sessionKv.position) })
        .from(sessionKv)
        .where(ofSession)
        .get();
      const position = (last?.p ?? 0) + 1;
      // An update moves the key to the end.
      const row = { position, value: entry.value, ts: entry.ts, version: entry.version };
      this.orm
        .insert(sessionKv)
        .values({ sessionSeq: session.seq, key: entry.key, ...row })
        .onConflictDoUpdate({ target: [sessionKv.sessionSeq, sessionKv.key], set: row })
        .run();
      const size = this.orm.select({ n: count() }).from(sessionKv).where(ofSession).get()?.n ?? 0;
      if (size > this.#caps.kvCap) {
        const oldest = this.orm
          .select({ seq: sessionKv.seq })
          .from(sessionKv)
          .where(ofSession)
          .orderBy(asc(sessionKv.position))
          .limit(size - this.#caps.kvCap);
        this.orm.delete(sessionKv).where(inArray(sessionKv.seq, oldest)).run();
      }
      return entry;
    });
  }

  async kvDelete(scope: Scope, sessionId: string, key: string, options?: WriteOptions): Promise<boolean> {
    const s = parseScope(scope);
    parseOrThrow(KvKeySchema, key, 'key');
    const { expectedVersion } = parseWriteOptions(options);
    return this.write(() => {
      const session = this.#requireSession(s, sessionId);
      const ofKey = and(eq(sessionKv.sessionSeq, session.seq), eq(sessionKv.key, key));
      if (expectedVersion !== undefined) {
        const current = this.orm.select({ version: sessionKv.version }).from(sessionKv).where(ofKey).get();
        checkKvVersion(key, current?.version ?? 0, expectedVersion);
      }
      return this.orm.delete(sessionKv).where(ofKey).run().changes > 0;
    });
  }

  async kvList(scope: Scope, sessionId: string): Promise<KvEntry[]> {
    const s = parseScope(scope);
    return this.read(() => this.#kvOf(this.#requireSession(s, sessionId).seq));
  }

  async transcriptAppend(
    scope: Scope,
    sessionId: string,
    entries: ChatMessage | ChatMessage[],
  ): Promise<TranscriptEntry[]> {
    const s = checkScope(scope);
    const id = sessionKey(sessionId);
    const parsed = newTranscriptEntries(entries, isoAt(this.clock));
    this.write(() => {
      const head = this.#statements.head.get(s.userId, agentColumn(s.agentId), id) as
        | [number, number | null]
        | undefined;
      if (!head) throw sessionNotFoundError(sessionId);
      const seq = head[0];
      const last = head[1] ?? 0;
      parsed.forEach((entry, i) => {
        this.#insertTranscript(seq, last + i + 1, entry);
      });
      const newest = last + parsed.length;
      if (newest > this.#caps.transcriptCap) {
        this.#statements.trim.run(seq, newest - this.#caps.transcriptCap);
      }
    });
    return parsed;
  }

  async transcriptReadLast(scope: Scope, sessionId: string, n: number): Promise<TranscriptEntry[]> {
    const s = checkScope(scope);
    const id = sessionKey(sessionId);
    const limit = transcriptReadCount(n);
    const partition = [s.userId, agentColumn(s.agentId), id] as const;
    // One statement sees one state: no transaction needed. No rows: an empty transcript, or no session.
    const rows = this.readOne(() =>
      limit === 0 ? [] : (this.#statements.last.all(...partition, limit) as RawEntry[]),
    );
    if (rows.length === 0) {
      if (this.readOne(() => this.#statements.seq.get(...partition)) === undefined) {
        throw sessionNotFoundError(sessionId);
      }
      return [];
    }
    const out: TranscriptEntry[] = new Array(rows.length);
    for (let i = 0; i < rows.length; i++) out[rows.length - 1 - i] = rawToEntry(rows[i]!);
    return out;
  }

  async eraseUser(userId: string): Promise<string[]> {
    return this.eraseAll(userId, () => {
      const rows = this.orm
        .select({ seq: sessions.seq, id: sessions.id })
        .from(sessions)
        .where(eq(sessions.userId, userId))
        .all();
      this.#deleteSessions(rows.map((r) => r.seq));
      return rows.map((r) => r.id);
    });
  }

  async snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<SessionRecord>> {
    return this.snapshotOf('sessions', selector, (userId) =>
      this.orm
        .select()
        .from(sessions)
        .where(userId === undefined ? undefined : eq(sessions.userId, userId))
        .orderBy(asc(sessions.userId), asc(sessions.agentId), asc(sessions.seq))
        .all()
        .map((row) => ({
          session: toSession(row),
          kv: this.#kvOf(row.seq),
          transcript: this.orm
            .select()
            .from(sessionTranscript)
            .where(eq(sessionTranscript.sessionSeq, row.seq))
            .orderBy(asc(sessionTranscript.position))
            .all()
            .map(toTranscriptEntry),
        })),
    );
  }

  /** Replaces, per user + agent in the snapshot, the whole session index with its data. */
  async restore(snapshot: unknown, options: RestoreOptions = {}): Promise<RestoreReport> {
    return this.restoreFrom('sessions', SessionRecordSchema, snapshot, options, {
      userIdOf: (r) => r.session.userId,
      partitionOf: (r) => `${r.session.userId}/${agentColumn(r.session.agentId)}`,
      idOf: (r) => r.session.id.toLowerCase(),
      replace: (records) => {
        const old = this.orm
          .select({ seq: sessions.seq })
          .from(sessions)
          .where(inPartition(records[0]!.session))
          .all();
        this.#deleteSessions(old.map((r) => r.seq));
        for (const record of records) {
          const seq = this.#insertSession({ ...record.session, id: record.session.id.toLowerCase() });
          record.kv.forEach((e, i) => {
            this.orm
              .insert(sessionKv)
              .values({
                sessionSeq: seq,
                position: i + 1,
                key: e.key,
                value: e.value,
                ts: e.ts,
                version: e.version,
              })
              .run();
          });
          record.transcript.forEach((entry, i) => {
            this.#insertTranscript(seq, i + 1, entry);
          });
        }
      },
    });
  }

  #insertSession(session: SessionInfo): number {
    const [row] = this.orm
      .insert(sessions)
      .values({
        userId: session.userId,
        agentId: agentColumn(session.agentId),
        id: session.id,
        storeTypes: session.storeTypes,
        title: session.title ?? null,
        metadata: session.metadata,
        createdAt: session.createdAt,
      })
      .returning({ seq: sessions.seq })
      .all();
    return row!.seq;
  }

  #insertTranscript(sessionSeq: number, position: number, entry: TranscriptEntry): void {
    this.#statements.insert.run(
      sessionSeq,
      position,
      entry.role,
      entry.content,
      // As drizzle's JSON column writes it.
      entry.toolCalls == null ? null : JSON.stringify(entry.toolCalls),
      entry.toolCallId ?? null,
      entry.name ?? null,
      entry.ts,
    );
  }

  #kvOf(sessionSeq: number): KvEntry[] {
    return this.orm
      .select(kvColumns)
      .from(sessionKv)
      .where(eq(sessionKv.sessionSeq, sessionSeq))
      .orderBy(asc(sessionKv.position))
      .all();
  }

  #deleteSessions(seqs: number[]): void {
    if (seqs.length === 0) return;
    this.orm.delete(sessionKv).where(inArray(sessionKv.sessionSeq, seqs)).run();
    this.orm.delete(sessionTranscript).where(inArray(sessionTranscript.sessionSeq, seqs)).run();
    this.orm.delete(sessions).where(inArray(sessions.seq, seqs)).run();
  }

  /** The caller's session row; NOT_FOUND when the id is not in the caller's index. */
  #requireSession(scope: Scope, sessionId: string): SessionRow {
    const row = this.#session(scope, sessionId);
    if (!row) throw sessionNotFoundError(sessionId);
    return row;
  }

  /** The caller's session row, or undefined when the id is not in the caller's index. */
  #session(scope: Scope, sessionId: string): SessionRow | undefined {
    const id = sessionKey(sessionId);
    return this.orm
      .select()
      .from(sessions)
      .where(and(inPartition(scope), eq(sessions.id, id)))
      .get();
  }
}
