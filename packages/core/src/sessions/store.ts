import type { Scope, SnapshotSelector } from '../scope.js';
import type { RestoreOptions, RestoreReport, SnapshotEnvelope } from '../snapshot/envelope.js';
import type {
  KvEntry,
  SessionCreateOptions,
  SessionInfo,
  SessionRecord,
  TranscriptEntry,
  TranscriptInput,
} from './record.js';

/**
 * Conversation sessions (the Rust bot's MemorySystem + BasicSessionStore, RockBot's conversation memory):
 * a UUIDv7 session index per user + agent, and per session a capped key-value map and a capped transcript.
 * Operations on a session id that is not in the caller's index throw NotFoundError.
 */
export interface SessionStore {
  create(scope: Scope, options?: SessionCreateOptions): Promise<SessionInfo>;
  load(scope: Scope, sessionId: string): Promise<SessionInfo>;
  /** The caller's sessions, oldest first. */
  list(scope: Scope): Promise<SessionInfo[]>;
  delete(scope: Scope, sessionId: string): Promise<boolean>;
  kvGet(scope: Scope, sessionId: string, key: string): Promise<string | null>;
  /** Insert or update; an update moves the key to the end. Past the cap the oldest key is evicted (FIFO). */
  kvSet(scope: Scope, sessionId: string, key: string, value: string): Promise<void>;
  kvDelete(scope: Scope, sessionId: string, key: string): Promise<boolean>;
  /** Entries oldest first. */
  kvList(scope: Scope, sessionId: string): Promise<KvEntry[]>;
  /** Append one entry or several (atomically, in order). Past the cap the oldest entries are evicted. */
  transcriptAppend(
    scope: Scope,
    sessionId: string,
    entries: TranscriptInput | TranscriptInput[],
  ): Promise<TranscriptEntry[]>;
  /** The last `n` entries, oldest first. */
  transcriptReadLast(scope: Scope, sessionId: string, n: number): Promise<TranscriptEntry[]>;
  snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<SessionRecord>>;
  restore(snapshot: unknown, options?: RestoreOptions): Promise<RestoreReport>;
}
