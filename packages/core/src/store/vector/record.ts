import { z } from 'zod';
import { IdSchema } from '../../foundation/ids.js';
import { MetadataSchema } from '../../foundation/record-fields.js';

/** What a vector stands for: `facts`, `documents`, `details`, `transcript` … */
export const VectorKindSchema = z.string().min(1).max(32);

/**
 * The embedding model that made a vector (an `Embedder`'s `modelId`). Recorded with every point so that
 * vectors of two models are never ranked against each other without anyone noticing.
 */
export const EmbeddingModelIdSchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[^\p{Cc}]+$/u, 'must not contain control characters');

export const VectorPointSchema = z.object({
  id: IdSchema,
  kind: VectorKindSchema,
  vector: z.array(z.number().refine(Number.isFinite, 'must be a finite number')).min(1).max(16_384),
  payload: MetadataSchema.default({}),
  model: EmbeddingModelIdSchema.optional(),
});

export type VectorPointInput = z.input<typeof VectorPointSchema>;
export type VectorPoint = z.output<typeof VectorPointSchema>;

/**
 * Payload keys a query may filter on: plain identifiers, so every backend can address them (Qdrant reads
 * dots as nesting).
 */
export const PayloadFilterKeySchema = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'must be letters, digits and _ (not starting with a digit)');

/** Exact-match payload values: strings, integers and booleans (what every backend can match exactly). */
export const PayloadFilterValueSchema = z.union([
  z.string().max(1_000),
  z.number().int().min(Number.MIN_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER),
  z.boolean(),
]);

export const VectorQuerySchema = z.object({
  vector: z.array(z.number().refine(Number.isFinite, 'must be a finite number')).min(1).max(16_384),
  limit: z.number().int().min(1).max(1000).default(10),
  kind: VectorKindSchema.optional(),
  /** Drop hits below this cosine similarity. */
  minScore: z.number().min(-1).max(1).optional(),
  /** Keep only points whose payload has every one of these key/value pairs (exact match). */
  filter: z.record(PayloadFilterKeySchema, PayloadFilterValueSchema).optional(),
});

export type VectorQuery = z.input<typeof VectorQuerySchema>;

/** Ids given to `delete`: validated like every other id, never passed on unchecked. */
export const VectorIdsSchema = z.array(IdSchema);

/** Narrows `count`, `models` and `clear` to one kind of point. */
export const VectorSelectionSchema = z
  .object({
    kind: VectorKindSchema.optional(),
    /** `clear` only: keep the points made by this model (drop every other model's and unlabelled ones). */
    exceptModel: EmbeddingModelIdSchema.optional(),
  })
  .strict();

export type VectorSelection = z.input<typeof VectorSelectionSchema>;

export interface VectorHit {
  id: string;
  kind: string;
  /** Cosine similarity in [-1, 1]. */
  score: number;
  payload: VectorPoint['payload'];
  /** The model that made the stored vector, when it was recorded. */
  model?: string;
}

/** How many points of the scope (and kind) each embedding model made; `model: null` for unlabelled ones. */
export interface VectorModelCount {
  model: string | null;
  count: number;
}
