import { z } from 'zod';
import { ValidationError } from '../../foundation/errors.js';
import { IdSchema } from '../../foundation/ids.js';
import { MetadataSchema } from '../../foundation/record-fields.js';
import type { Scope, SnapshotSelector } from '../../foundation/scope.js';
import type { RestoreOptions, RestoreReport } from '../snapshot/envelope.js';
import type { VectorSnapshot } from './snapshot.js';

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

/**
 * Nearest-neighbour search over embeddings, partitioned by user + agent like every store: every
 * operation takes a scope and only ever sees the caller's points. A point id is unique within a
 * partition (across kinds: upserting an id again replaces the point, whatever its kind).
 */
export interface VectorIndex {
  readonly dimensions: number;
  /** Insert or replace points. Validates every point first: one bad point stores none. */
  upsert(scope: Scope, points: VectorPointInput[]): Promise<void>;
  /** The scope's points most similar (cosine) to `query.vector`, best first. */
  search(scope: Scope, query: VectorQuery): Promise<VectorHit[]>;
  /** Remove these ids; returns how many existed. */
  delete(scope: Scope, ids: string[]): Promise<number>;
  count(scope: Scope, selection?: Pick<VectorSelection, 'kind'>): Promise<number>;
  /** Which embedding models made the scope's points, with counts, sorted by model id (unlabelled last). */
  models(scope: Scope, selection?: Pick<VectorSelection, 'kind'>): Promise<VectorModelCount[]>;
  /** Remove the scope's points (of one kind, or all but one model's); returns how many were removed. */
  clear(scope: Scope, selection?: VectorSelection): Promise<number>;
  /** Removes every point of the user, every agent and kind, in one bulk operation; returns their ids. */
  eraseUser(userId: string): Promise<string[]>;
  /** Every point of one user, or of every user, with vectors and payloads, in a versioned envelope. */
  snapshot(selector: SnapshotSelector): Promise<VectorSnapshot>;
  /** Replaces every partition (user + agent) that the snapshot contains. Validates everything first. */
  restore(snapshot: unknown, options?: RestoreOptions): Promise<RestoreReport>;
}

export function assertDimensions(vector: readonly number[], dimensions: number): void {
  if (vector.length !== dimensions) {
    throw new ValidationError(
      `Vector has ${vector.length} dimensions; this index holds ${dimensions}-dimensional vectors.`,
      { details: { expected: dimensions, actual: vector.length } },
    );
  }
}

/** True when `payload` holds every key/value of `filter` (the reference semantics of `VectorQuery.filter`). */
export function payloadMatches(
  payload: Readonly<Record<string, unknown>>,
  filter: Readonly<Record<string, string | number | boolean>> | undefined,
): boolean {
  if (!filter) return true;
  for (const [key, value] of Object.entries(filter)) {
    if (!Object.hasOwn(payload, key) || payload[key] !== value) return false;
  }
  return true;
}
