import { z } from 'zod';
import { NotFoundError } from '../errors.js';
import { timeOrderedId, UuidSchema } from '../ids.js';
import type { Scope } from '../scope.js';
import { parseOrThrow } from '../validation.js';
import {
  type KvEntry,
  KvEntrySchema,
  type SessionCreateOptions,
  SessionCreateSchema,
  type SessionInfo,
  SessionInfoSchema,
  type TranscriptEntry,
  type TranscriptInput,
  TranscriptInputSchema,
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
  return parseOrThrow(UuidSchema, sessionId, 'session id').toLowerCase();
}

/** What an operation on a session that is not in the caller's index throws. */
export function sessionNotFoundError(sessionId: string): NotFoundError {
  return new NotFoundError(`No session "${sessionId}" for this user.`, { details: { sessionId } });
}

/** The k-v entry `kvSet` stores (key and value checked), stamped `ts`. */
export function newKvEntry(key: string, value: string, ts: string): KvEntry {
  return parseOrThrow(KvEntrySchema, { key, value, ts }, 'key-value entry');
}

/** What `transcriptAppend` stores: the entry or entries, each checked, in order, all stamped `ts`. */
export function newTranscriptEntries(
  entries: TranscriptInput | TranscriptInput[],
  ts: string,
): TranscriptEntry[] {
  const list = Array.isArray(entries) ? entries : [entries];
  return list.map((e, i) => ({ ...parseOrThrow(TranscriptInputSchema, e, `transcript entry ${i}`), ts }));
}

/** `transcriptReadLast`'s count, checked: a whole number from 0 to 100,000. */
export function transcriptReadCount(n: number): number {
  return parseOrThrow(ReadCountSchema, n, 'entry count');
}
