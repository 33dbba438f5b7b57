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

export const TranscriptEntrySchema = ChatMessageSchema.extend({ ts: IsoDateSchema });
export type TranscriptEntry = z.infer<typeof TranscriptEntrySchema>;

/** One session with all its data, as snapshots carry it. */
export const SessionRecordSchema = z.object({
  session: SessionInfoSchema,
  kv: z.array(KvEntrySchema),
  transcript: z.array(TranscriptEntrySchema),
});

export type SessionRecord = z.infer<typeof SessionRecordSchema>;
