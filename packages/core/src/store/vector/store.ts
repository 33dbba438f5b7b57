import { ValidationError } from '../../foundation/errors.js';
import type { Scope, SnapshotSelector } from '../../foundation/scope.js';
import type { RestoreOptions, RestoreReport } from '../snapshot/envelope.js';
import type {
  VectorHit,
  VectorModelCount,
  VectorPointInput,
  VectorQuery,
  VectorSelection,
} from './record.js';
import type { VectorSnapshot } from './snapshot.js';

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
