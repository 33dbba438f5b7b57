import { parseScope, type Scope } from '../scope.js';
import { parseOrThrow } from '../validation.js';
import {
  assertDimensions,
  type VectorHit,
  VectorIdsSchema,
  type VectorIndex,
  type VectorPointInput,
  VectorPointSchema,
  type VectorQuery,
  VectorQuerySchema,
} from './index.js';

interface StoredPoint {
  id: string;
  kind: string;
  /** Unit-length copy, so cosine similarity is a dot product. */
  unit: Float32Array;
  payload: VectorHit['payload'];
}

function normalize(vector: readonly number[]): Float32Array {
  let norm = 0;
  for (const x of vector) norm += x * x;
  const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
  const out = new Float32Array(vector.length);
  for (let i = 0; i < vector.length; i++) out[i] = vector[i]! * scale;
  return out;
}

function partitionKey(scope: Scope): string {
  return `${scope.userId}\u0000${scope.agentId ?? ''}`;
}

/** Exact (brute-force) cosine search in process memory: the reference VectorIndex. */
export class InMemoryVectorIndex implements VectorIndex {
  readonly dimensions: number;
  readonly #partitions = new Map<string, Map<string, StoredPoint>>();

  constructor(options: { dimensions: number }) {
    this.dimensions = options.dimensions;
  }

  async upsert(scope: Scope, points: VectorPointInput[]): Promise<void> {
    const key = partitionKey(parseScope(scope));
    // Validate every point before storing any.
    const parsed = points.map((p) => {
      const point = parseOrThrow(VectorPointSchema, p, 'vector point');
      assertDimensions(point.vector, this.dimensions);
      return { id: point.id, kind: point.kind, unit: normalize(point.vector), payload: point.payload };
    });
    let partition = this.#partitions.get(key);
    if (!partition) {
      partition = new Map();
      this.#partitions.set(key, partition);
    }
    for (const point of parsed) partition.set(point.id, point);
  }

  async query(scope: Scope, query: VectorQuery): Promise<VectorHit[]> {
    const key = partitionKey(parseScope(scope));
    const q = parseOrThrow(VectorQuerySchema, query, 'vector query');
    assertDimensions(q.vector, this.dimensions);
    const unit = normalize(q.vector);
    const hits: VectorHit[] = [];
    for (const point of this.#partitions.get(key)?.values() ?? []) {
      if (q.kind !== undefined && point.kind !== q.kind) continue;
      let dot = 0;
      for (let i = 0; i < unit.length; i++) dot += unit[i]! * point.unit[i]!;
      if (q.minScore !== undefined && dot < q.minScore) continue;
      hits.push({ id: point.id, kind: point.kind, score: dot, payload: point.payload });
    }
    return hits.sort((a, b) => b.score - a.score).slice(0, q.limit);
  }

  async delete(scope: Scope, ids: string[]): Promise<number> {
    const key = partitionKey(parseScope(scope));
    parseOrThrow(VectorIdsSchema, ids, 'vector ids');
    const partition = this.#partitions.get(key);
    if (!partition) return 0;
    let removed = 0;
    for (const id of ids) if (partition.delete(id)) removed++;
    return removed;
  }

  async count(scope: Scope): Promise<number> {
    return this.#partitions.get(partitionKey(parseScope(scope)))?.size ?? 0;
  }
}
