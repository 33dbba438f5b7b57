import { z } from 'zod';
import { IdSchema, UuidSchema } from '../../foundation/ids.js';
import { LIMITS } from '../../foundation/limits.js';
import { IsoDateSchema, MetadataSchema, OptionalAgentIdSchema } from '../../foundation/record-fields.js';
import { RecordVersionSchema } from '../../foundation/version.js';
import { ChatMessageSchema } from '../../model/messages.js';

/** An entry in the user's session index. */
export const SessionInfoSchema = z.object({
  id: UuidSchema,
  userId: IdSchema,
  agentId: OptionalAgentIdSchema,
  /** Which stores the session uses (e.g. `basic_session`). */
  storeTypes: z.array(z.string().min(1).max(64)).max(16),
  title: z.string().max(LIMITS.titleChars).optional(),
  metadata: MetadataSchema,
  createdAt: IsoDateSchema,
});

export type SessionInfo = z.infer<typeof SessionInfoSchema>;

export const SessionCreateSchema = z.object({
  storeTypes: z.array(z.string().min(1).max(64)).max(16).default(['basic_session']),
  title: z.string().max(LIMITS.titleChars).optional(),
  metadata: MetadataSchema.default({}),
});

export type SessionCreateOptions = z.input<typeof SessionCreateSchema>;

export const KvKeySchema = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[^\p{Cc}]+$/u, 'must not contain control characters');

const SessionValueSchema = z
  .string()
  .max(LIMITS.sessionValueChars, `value is larger than the ${LIMITS.sessionValueChars}-character limit`);

export const KvEntrySchema = z.object({
  key: KvKeySchema,
  value: SessionValueSchema,
  ts: IsoDateSchema,
  /**
   * 1 when the key is set while the session has no entry for it (first set, or set again after a delete
   * or an eviction), one more on every `kvSet` of the entry.
   */
  version: RecordVersionSchema,
});
export type KvEntry = z.infer<typeof KvEntrySchema>;

export const TranscriptEntrySchema = ChatMessageSchema.extend({
  ts: IsoDateSchema,
  /**
   * The turn id the entry was appended with (`transcriptAppend`'s `turnId`), on the first entry of that
   * append only: a store keeps one append per turn id and session.
   */
  turnId: IdSchema.optional(),
});
export type TranscriptEntry = z.infer<typeof TranscriptEntrySchema>;

/** How `transcriptAppend` appends (see `SessionStore.transcriptAppend`). */
export const TranscriptAppendOptionsSchema = z
  .object({
    /**
     * Idempotency key of the append (a turn id): an append whose `turnId` the session's transcript already
     * holds appends nothing, so a retry after an ambiguous failure stores the turn once.
     */
    turnId: IdSchema.optional(),
    /**
     * Mark the session as having turns for background work (extraction's outbox), in the same atomic step
     * as the append: `listPending` returns it until `clearPending` clears it at its mark.
     */
    pending: z.boolean().optional(),
  })
  .strict();
export type TranscriptAppendOptions = z.input<typeof TranscriptAppendOptionsSchema>;

/** A session whose transcript had turns appended with `pending: true` since its pending state was cleared. */
export interface PendingSession {
  userId: string;
  agentId?: string;
  sessionId: string;
  /** Moves on with every pending append: `clearPending` clears the session only at this mark. */
  mark: number;
  /** When the first pending append since the last clear was made (ISO 8601). */
  since: string;
}

/** What `listPending` lists: every user's sessions (longest waiting first), or one user's (+ agent's). */
export const PendingQuerySchema = z
  .object({
    /** Only this user's sessions, of this agent (none: the sessions without one). */
    scope: z.object({ userId: IdSchema, agentId: OptionalAgentIdSchema }).strict().optional(),
    /** At most this many (default 1000). */
    limit: z.number().int().min(1).max(100_000).optional(),
  })
  .strict();
export type PendingQuery = z.input<typeof PendingQuerySchema>;

/** `listPending`'s default page. */
export const PENDING_LIST_DEFAULT = 1000;

/** One session with all its data, as snapshots carry it. */
export const SessionRecordSchema = z.object({
  session: SessionInfoSchema,
  kv: z.array(KvEntrySchema),
  transcript: z.array(TranscriptEntrySchema),
});

export type SessionRecord = z.infer<typeof SessionRecordSchema>;
