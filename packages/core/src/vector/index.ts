import { z } from 'zod';
import { ValidationError } from '../errors.js';
import { IdSchema } from '../ids.js';
import { MetadataSchema } from '../records/common.js';
import type { Scope } from '../scope.js';

export const VectorPointSchema = z.object({
  id: IdSchema,
  /** What the vector stands for: `facts`, `documents`, `details`, `transcript` … */
  kind: z.string().min(1).max(32),
  vector: z.array(z.number().refine(Number.isFinite, 'must be a finite number')).min(1).max(16_384),
  payload: MetadataSchema.default({}),
});

export type VectorPointInput = z.input<typeof VectorPointSchema>;
export type VectorPoint = z.output<typeof VectorPointSchema>;

export const VectorQuerySchema = z.object({
  vector: z.array(z.number()).min(1).max(16_384),
  limit: z.number().int().min(1).max(1000).default(10),
  kind: z.string().min(1).max(32).optional(),
  /** Drop hits below this cosine similarity. */
  minScore: z.number().min(-1).max(1).optional(),
});

export type VectorQuery = z.input<typeof VectorQuerySchema>;

/** Ids given to `delete`: validated like every other id, never passed on unchecked. */
export const VectorIdsSchema = z.array(IdSchema);

export interface VectorHit {
  id: string;
  kind: string;
  /** Cosine similarity in [-1, 1]. */
  score: number;
  payload: VectorPoint['payload'];
}

/**
 * Nearest-neighbour search over embeddings, partitioned by user + agent like every store: a query only
 * ever ranks the caller's points.
 */
export interface VectorIndex {
  readonly dimensions: number;
  upsert(scope: Scope, points: VectorPointInput[]): Promise<void>;
  query(scope: Scope, query: VectorQuery): Promise<VectorHit[]>;
  delete(scope: Scope, ids: string[]): Promise<number>;
  count(scope: Scope): Promise<number>;
}

export function assertDimensions(vector: readonly number[], dimensions: number): void {
  if (vector.length !== dimensions) {
    throw new ValidationError(
      `Vector has ${vector.length} dimensions; this index holds ${dimensions}-dimensional vectors.`,
      { details: { expected: dimensions, actual: vector.length } },
    );
  }
}
