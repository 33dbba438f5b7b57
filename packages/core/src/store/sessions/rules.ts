import { z } from 'zod';
import { NotFoundError } from '../../foundation/errors.js';
import { timeOrderedId, UUID_PATTERN, UuidSchema } from '../../foundation/ids.js';
import type { Scope } from '../../foundation/scope.js';
import { parseOrThrow } from '../../foundation/validation.js';
import { checkVersion, type UpsertOptions, UpsertOptionsSchema } from '../../foundation/version.js';
import type { ChatMessage } from '../../model/messages.js';
import { ChatMessageSchema } from '../../model/messages.js';
import {
  type KvEntry,
  KvEntrySchema,
  PENDING_LIST_DEFAULT,
  type PendingQuery,
  PendingQuerySchema,
  type PendingSession,
  type SessionCreateOptions,
  SessionCreateSchema,
  type SessionInfo,
  SessionInfoSchema,
  type TranscriptAppendOptions,
  TranscriptAppendOptionsSchema,
  type TranscriptEntry,
} from './record.js';

/*
 * What every SessionStore decides the same way — core's partitioned store and the adapters alike —
 * before it reads or writes anything: what a new session, k-v entry or transcript entry is, how a
 * session id is keyed, and what an unknown session throws.
 */

const ReadCountSchema = z.number().int().min(0).max(100_000);

/** The caller's new session (options checked here); its id is a UUIDv7 of `nowMs`, so ids sort by creation. */
export function newSession(scope: Scope, options: SessionCreateOptions, nowMs: number): SessionInfo {
  const opts = parseOrThrow(SessionCreateSchema, options, 'session options');
  return parseOrThrow(
    SessionInfoSchema,
    {
      id: timeOrderedId(nowMs),
      userId: scope.userId,
      agentId: scope.agentId,
      storeTypes: opts.storeTypes,
      title: opts.title,
      metadata: opts.metadata,
      createdAt: new Date(nowMs).toISOString(),
    },
    'session',
  );
}

/** A session id as stores key it: a UUID (checked), in lower case. */
export function sessionKey(sessionId: string): string {
  // A valid id (every call of a turn) skips zod; anything else gets zod's error.
  if (typeof sessionId === 'string' && UUID_PATTERN.test(sessionId)) return sessionId.toLowerCase();
  return parseOrThrow(UuidSchema, sessionId, 'session id').toLowerCase();
}

/** What an operation on a session that is not in the caller's index throws. */
export function sessionNotFoundError(sessionId: string): NotFoundError {
  return new NotFoundError(`No session "${sessionId}" for this user.`, { details: { sessionId } });
}

/** What a `kvSet` writes, before it knows the key's current entry: see `versionedKvEntry`. */
export interface KvSet {
  /** The entry as it is stored when the session has no entry for the key (version 1). */
  entry: KvEntry;
  /** The caller's `expectedVersion` (validated): 0 for "only if the key has no entry". */
  expectedVersion: number | undefined;
}

/** What `kvSet` stores (key, value and options checked here), stamped `ts`, at version 1 until placed. */
export function newKvSet(key: string, value: string, ts: string, options: UpsertOptions = {}): KvSet {
  const entry = parseOrThrow(KvEntrySchema, { key, value, ts, version: 1 }, 'key-value entry');
  const { expectedVersion } = parseOrThrow(UpsertOptionsSchema, options, 'key-value options');
  return { entry, expectedVersion };
}

/**
 * The entry a `kvSet` stores over the key's `current` entry (undefined when there is none): version 1
 * when there is none, one more than the current one's otherwise. CONFLICT when the caller's
 * `expectedVersion` differs from the current version (0 when there is none). Call it inside the store's
 * atomic step, with the entry read in that step, before anything is evicted.
 */
export function versionedKvEntry(set: KvSet, current: Pick<KvEntry, 'version'> | undefined): KvEntry {
  checkKvVersion(set.entry.key, current?.version ?? 0, set.expectedVersion);
  return current === undefined ? set.entry : { ...set.entry, version: current.version + 1 };
}

/** CONFLICT when `expectedVersion` is given and differs from `actual` (0: the session has no such key). */
export function checkKvVersion(key: string, actual: number, expectedVersion: number | undefined): void {
  checkVersion(`session value "${key}"`, actual, expectedVersion);
}

/** What `transcriptAppend` stores: the entry or entries, each checked, in order, all stamped `ts`. */
export function newTranscriptEntries(
  entries: ChatMessage | ChatMessage[],
  ts: string,
  options: TranscriptAppendOptions = {},
): TranscriptEntry[] {
  const { turnId } = transcriptAppendOptions(options);
  const list = Array.isArray(entries) ? entries : [entries];
  // The schema keeps a message's own fields only: a `ts` or `turnId` it carries is the append's.
  return list.map((e, i) => {
    const entry: TranscriptEntry = { ...parseOrThrow(ChatMessageSchema, e, `transcript entry ${i}`), ts };
    return i === 0 && turnId !== undefined ? { ...entry, turnId } : entry;
  });
}

/** `transcriptAppend`'s options, checked. */
export function transcriptAppendOptions(options: TranscriptAppendOptions = {}): {
  turnId?: string;
  pending: boolean;
} {
  const parsed = parseOrThrow(TranscriptAppendOptionsSchema, options, 'transcript append options');
  return {
    ...(parsed.turnId === undefined ? {} : { turnId: parsed.turnId }),
    pending: parsed.pending === true,
  };
}

/** `listPending`'s query, checked: the scope (if any) and the page size. */
export function pendingQuery(query: PendingQuery = {}): { scope?: Scope; limit: number } {
  const parsed = parseOrThrow(PendingQuerySchema, query, 'pending query');
  return {
    ...(parsed.scope ? { scope: parsed.scope } : {}),
    limit: parsed.limit ?? PENDING_LIST_DEFAULT,
  };
}

/** `clearPending`'s mark, checked: a whole number. */
export function pendingMark(mark: number): number {
  return parseOrThrow(PendingMarkSchema, mark, 'pending mark');
}

const PendingMarkSchema = z.number().int().min(0);

/** Pending sessions, the longest waiting first (ties by user, agent and session). */
export function byWaiting(a: PendingSession, b: PendingSession): number {
  return (
    compareText(a.since, b.since) ||
    compareText(a.userId, b.userId) ||
    compareText(a.agentId ?? '', b.agentId ?? '') ||
    compareText(a.sessionId, b.sessionId)
  );
}

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** `transcriptReadLast`'s count, checked: a whole number from 0 to 100,000. */
export function transcriptReadCount(n: number): number {
  if (Number.isInteger(n) && n >= 0 && n <= 100_000) return n;
  return parseOrThrow(ReadCountSchema, n, 'entry count');
}
