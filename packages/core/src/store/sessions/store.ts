import type { Scope, SnapshotSelector } from '../../foundation/scope.js';
import type { UpsertOptions, WriteOptions } from '../../foundation/version.js';
import type { ChatMessage } from '../../model/messages.js';
import type { ErasureResidueReader } from '../erasure-residue.js';
import type { RestoreOptions, RestoreReport, SnapshotEnvelope } from '../snapshot/envelope.js';
import type {
  KvEntry,
  PendingQuery,
  PendingSession,
  SessionCreateOptions,
  SessionInfo,
  SessionRecord,
  TranscriptAppendOptions,
  TranscriptEntry,
} from './record.js';

/**
 * Conversation sessions:
 * a UUIDv7 session index per user + agent, and per session a capped key-value map and a capped transcript.
 * `get` of a session id that is not in the caller's index returns null; every other operation on such an
 * id throws NotFoundError. Every k-v entry has a version: 1 when its key is set while the session has no
 * entry for it, one more on every `kvSet` of the entry; `kvSet` and `kvDelete` take an `expectedVersion`
 * and check it in the same atomic step as their write.
 */
export interface SessionStore extends ErasureResidueReader {
  create(scope: Scope, options?: SessionCreateOptions): Promise<SessionInfo>;
  /** The session, or null when it is not in the caller's index. */
  get(scope: Scope, sessionId: string): Promise<SessionInfo | null>;
  /** The caller's sessions, oldest first. */
  list(scope: Scope): Promise<SessionInfo[]>;
  delete(scope: Scope, sessionId: string): Promise<boolean>;
  /** The key's entry (value, time, version), or null when the session has none. */
  kvGet(scope: Scope, sessionId: string, key: string): Promise<KvEntry | null>;
  /**
   * Insert or update; an update moves the key to the end. Past the cap the oldest key is evicted (FIFO).
   * Returns the entry as stored. With `options.expectedVersion` (0: the key has no entry), a key at another
   * version is ConflictError (`details: { expectedVersion, actualVersion }`) and nothing is written or
   * evicted.
   */
  kvSet(
    scope: Scope,
    sessionId: string,
    key: string,
    value: string,
    options?: UpsertOptions,
  ): Promise<KvEntry>;
  /**
   * Delete the key; true when it had an entry. With `options.expectedVersion`, a key at another version,
   * or without an entry (actual version 0), is ConflictError and nothing is deleted.
   */
  kvDelete(scope: Scope, sessionId: string, key: string, options?: WriteOptions): Promise<boolean>;
  /** Entries oldest first. */
  kvList(scope: Scope, sessionId: string): Promise<KvEntry[]>;
  /**
   * Append one entry or several (atomically, in order). Past the cap the oldest entries are evicted, but
   * not while the session is pending: the outbox drops nothing its workers have not read (`clearPending`
   * evicts them then).
   * Returns the entries appended. With `options.turnId`, an append whose turn id the session's transcript
   * already holds (on an entry not yet evicted) appends nothing and returns `[]`; the id is stored on the
   * first entry. With `options.pending`, the same atomic step marks the session pending (see `listPending`).
   */
  transcriptAppend(
    scope: Scope,
    sessionId: string,
    entries: ChatMessage | ChatMessage[],
    options?: TranscriptAppendOptions,
  ): Promise<TranscriptEntry[]>;
  /** The last `n` entries, oldest first. */
  transcriptReadLast(scope: Scope, sessionId: string, n: number): Promise<TranscriptEntry[]>;
  /**
   * Sessions marked pending by `transcriptAppend(…, { pending: true })` and not cleared since, the longest
   * waiting first (by `since`): of every user, or of `query.scope`'s user and agent. This is how background
   * workers find turns to extract: the mark is written with the turn, so no acknowledged turn is missed.
   */
  listPending(query?: PendingQuery): Promise<PendingSession[]>;
  /**
   * Clear the session's pending state if its mark is still `mark` (no pending append since it was read),
   * and evict the transcript's entries past the cap kept while it was pending; false when the mark moved
   * on or the session is not pending (or not the caller's).
   */
  clearPending(scope: Scope, sessionId: string, mark: number): Promise<boolean>;
  /**
   * Deletes every record of the user — every agent, with every session's k-v map and transcript, Kioku's own sessions too — in one bulk operation, whatever their
   * number (no page limit); returns the session ids removed. Other users are untouched. Used by `forgetUser`.
   */
  eraseUser(userId: string): Promise<string[]>;
  snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<SessionRecord>>;
  restore(snapshot: unknown, options?: RestoreOptions): Promise<RestoreReport>;
}
