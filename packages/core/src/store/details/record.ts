import { z } from 'zod';
import { IdSchema } from '../../foundation/ids.js';
import { LIMITS } from '../../foundation/limits.js';
import {
  IsoDateSchema,
  MetadataSchema,
  OptionalAgentIdSchema,
  textSchema,
} from '../../foundation/record-fields.js';

const DetailTypeSchema = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,49}$/, 'must be a snake_case type such as "tool_output"');
const DescriptionSchema = z.string().trim().min(1).max(500);

/**
 * Layer 2 of two-layer memory: the full content behind a
 * `[MemoryRef: id - description - N tokens]` placeholder. Owned by a user; agent and thread are recorded.
 */
export const DetailRecordSchema = z.object({
  id: IdSchema,
  userId: IdSchema,
  agentId: OptionalAgentIdSchema,
  threadId: OptionalAgentIdSchema,
  /** e.g. `tool_output`, `command_output`, `user_preference`. */
  type: DetailTypeSchema,
  /** Brief description shown in the placeholder. */
  description: DescriptionSchema,
  /** Short summary kept in context beside the placeholder. */
  summary: z.string().max(8_000).optional(),
  content: textSchema(LIMITS.detailContentChars, 'content'),
  tokenCount: z.number().int().min(0),
  /** Tool or command, arguments, timings — whatever produced the content. */
  metadata: MetadataSchema,
  createdAt: IsoDateSchema,
  active: z.boolean(),
});

export type DetailRecord = z.infer<typeof DetailRecordSchema>;

export const DetailInputSchema = z.object({
  id: IdSchema.optional(),
  type: DetailTypeSchema.default('tool_output'),
  description: DescriptionSchema,
  summary: z.string().max(8_000).optional(),
  content: textSchema(LIMITS.detailContentChars, 'content'),
  metadata: MetadataSchema.default({}),
});

export type DetailInput = z.input<typeof DetailInputSchema>;

export const DetailFilterSchema = z.object({
  type: DetailTypeSchema.optional(),
  agentId: IdSchema.optional(),
  threadId: IdSchema.optional(),
  includeInactive: z.boolean().default(false),
});

export const DetailListOptionsSchema = DetailFilterSchema.extend({
  limit: z.number().int().min(1).max(100_000).optional(),
});

export type DetailListOptions = z.input<typeof DetailListOptionsSchema>;

export const DetailQuerySchema = DetailFilterSchema.extend({
  query: z.string().min(1).max(LIMITS.queryChars),
  limit: z.number().int().min(1).max(1000).default(5),
});

export type DetailQuery = z.input<typeof DetailQuerySchema>;

export interface DetailHit {
  detail: DetailRecord;
  score: number;
}
