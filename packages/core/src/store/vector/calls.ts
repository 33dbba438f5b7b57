import { parseOrThrow } from '../../foundation/validation.js';
import {
  VectorIdsSchema,
  type VectorPoint,
  type VectorPointInput,
  VectorPointSchema,
  type VectorQuery,
  VectorQuerySchema,
  type VectorSelection,
  VectorSelectionSchema,
} from './record.js';
import { assertDimensions } from './store.js';

/**
 * The arguments of a `VectorIndex` call, checked as every index checks them (an index runs these first and
 * writes or reads only what they return): one bad point, a vector of another size, a bad id or selection is
 * a ValidationError before anything is done.
 */

/** Every point valid and of `dimensions`, none stored otherwise; of a repeated id, the last one wins. */
export function parseVectorPoints(points: readonly VectorPointInput[], dimensions: number): VectorPoint[] {
  const parsed = points.map((input) => {
    const point = parseOrThrow(VectorPointSchema, input, 'vector point');
    assertDimensions(point.vector, dimensions);
    return point;
  });
  return [...new Map(parsed.map((point) => [point.id, point])).values()];
}

export type ParsedVectorQuery = ReturnType<typeof VectorQuerySchema.parse>;

/** A query with its defaults (`limit` 10), its vector of `dimensions`. */
export function parseVectorQuery(query: VectorQuery, dimensions: number): ParsedVectorQuery {
  const parsed = parseOrThrow(VectorQuerySchema, query, 'vector query');
  assertDimensions(parsed.vector, dimensions);
  return parsed;
}

/** Ids to delete, each valid, each once. */
export function parseVectorIds(ids: readonly string[]): string[] {
  return [...new Set(parseOrThrow(VectorIdsSchema, ids, 'vector ids'))];
}

/** `count`, `models` and `clear`'s selection (a kind; `clear` also a model to keep). */
export function parseVectorSelection(selection: VectorSelection): { kind?: string; exceptModel?: string } {
  const { kind, exceptModel } = parseOrThrow(VectorSelectionSchema, selection, 'vector selection');
  return { ...(kind === undefined ? {} : { kind }), ...(exceptModel === undefined ? {} : { exceptModel }) };
}
