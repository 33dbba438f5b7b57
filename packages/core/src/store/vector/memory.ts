import { type Clock, systemClock } from '../../foundation/clock.js';
import {
  parseScope,
  type Scope,
  type SnapshotSelector,
  SnapshotSelectorSchema,
} from '../../foundation/scope.js';
import { parseOrThrow } from '../../foundation/validation.js';
import type { RestoreOptions, RestoreReport } from '../snapshot/envelope.js';
import { parseVectorIds, parseVectorPoints, parseVectorQuery, parseVectorSelection } from './calls.js';
import type {
  VectorHit,
  VectorModelCount,
  VectorPoint,
  VectorPointInput,
  VectorQuery,
  VectorSelection,
} from './record.js';
import {
  makeVectorSnapshot,
  parseVectorSnapshot,
  type VectorRecord,
  type VectorSnapshot,
} from './snapshot.js';
import { payloadMatches, type VectorIndex } from './store.js';

interface StoredPoint {
  id: string;
  kind: string;
  /** As given (snapshots return it unchanged). */
  vector: number[];
  /** Unit-length copy, so cosine similarity is a dot product. */
  unit: Float32Array;
  payload: VectorHit['payload'];
  model: string | undefined;
}

interface Partition {
  userId: string;
  agentId: string | undefined;
  points: Map<string, StoredPoint>;
}

function normalize(vector: readonly number[]): Float32Array {
  let norm = 0;
  for (const x of vector) norm += x * x;
  const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
  const out = new Float32Array(vector.length);
  for (let i = 0; i < vector.length; i++) out[i] = vector[i]! * scale;
  return out;
}

function partitionKey(scope: Pick<Scope, 'userId' | 'agentId'>): string {
  return `${scope.userId}\u0000${scope.agentId ?? ''}`;
}

function toStored(point: VectorPoint): StoredPoint {
  return {
    id: point.id,
    kind: point.kind,
    vector: [...point.vector],
    unit: normalize(point.vector),
    payload: point.payload,
    model: point.model,
  };
}

/** Exact (brute-force) cosine search in process memory: the reference VectorIndex. */
export class InMemoryVectorIndex implements VectorIndex {
  readonly dimensions: number;
  readonly #clock: Clock;
  readonly #partitions = new Map<string, Partition>();

  constructor(options: { dimensions: number; clock?: Clock }) {
    this.dimensions = options.dimensions;
    this.#clock = options.clock ?? systemClock;
  }

  async upsert(scope: Scope, points: VectorPointInput[]): Promise<void> {
    const s = parseScope(scope);
    // Validate every point before storing any.
    const parsed = parseVectorPoints(points, this.dimensions).map(toStored);
    const key = partitionKey(s);
    let partition = this.#partitions.get(key);
    if (!partition) {
      partition = { userId: s.userId, agentId: s.agentId, points: new Map() };
      this.#partitions.set(key, partition);
    }
    for (const point of parsed) partition.points.set(point.id, point);
  }

  async search(scope: Scope, query: VectorQuery): Promise<VectorHit[]> {
    const key = partitionKey(parseScope(scope));
    const q = parseVectorQuery(query, this.dimensions);
    const unit = normalize(q.vector);
    const hits: VectorHit[] = [];
    for (const point of this.#partitions.get(key)?.points.values() ?? []) {
      if (q.kind !== undefined && point.kind !== q.kind) continue;
      if (!payloadMatches(point.payload, q.filter)) continue;
      let dot = 0;
      for (let i = 0; i < unit.length; i++) dot += unit[i]! * point.unit[i]!;
      if (q.minScore !== undefined && dot < q.minScore) continue;
      hits.push({
        id: point.id,
        kind: point.kind,
        score: dot,
        payload: point.payload,
        ...(point.model === undefined ? {} : { model: point.model }),
      });
    }
    return hits.sort((a, b) => b.score - a.score).slice(0, q.limit);
  }

  async delete(scope: Scope, ids: string[]): Promise<number> {
    const key = partitionKey(parseScope(scope));
    const unique = parseVectorIds(ids);
    const partition = this.#partitions.get(key);
    if (!partition) return 0;
    let removed = 0;
    for (const id of unique) if (partition.points.delete(id)) removed++;
    return removed;
  }

  async count(scope: Scope, selection: Pick<VectorSelection, 'kind'> = {}): Promise<number> {
    const key = partitionKey(parseScope(scope));
    const { kind } = parseVectorSelection(selection);
    const points = this.#partitions.get(key)?.points;
    if (!points) return 0;
    if (kind === undefined) return points.size;
    let n = 0;
    for (const point of points.values()) if (point.kind === kind) n++;
    return n;
  }

  async models(scope: Scope, selection: Pick<VectorSelection, 'kind'> = {}): Promise<VectorModelCount[]> {
    const key = partitionKey(parseScope(scope));
    const { kind } = parseVectorSelection(selection);
    const counts = new Map<string | null, number>();
    for (const point of this.#partitions.get(key)?.points.values() ?? []) {
      if (kind !== undefined && point.kind !== kind) continue;
      const model = point.model ?? null;
      counts.set(model, (counts.get(model) ?? 0) + 1);
    }
    return sortModelCounts([...counts].map(([model, count]) => ({ model, count })));
  }

  async clear(scope: Scope, selection: VectorSelection = {}): Promise<number> {
    const key = partitionKey(parseScope(scope));
    const { kind, exceptModel } = parseVectorSelection(selection);
    const points = this.#partitions.get(key)?.points;
    if (!points) return 0;
    let removed = 0;
    for (const [id, point] of points) {
      if (kind !== undefined && point.kind !== kind) continue;
      if (exceptModel !== undefined && point.model === exceptModel) continue;
      points.delete(id);
      removed++;
    }
    return removed;
  }

  async eraseUser(userId: string): Promise<string[]> {
    parseOrThrow(SnapshotSelectorSchema, { userId }, 'user id');
    const ids: string[] = [];
    for (const [key, partition] of this.#partitions) {
      if (partition.userId !== userId) continue;
      ids.push(...partition.points.keys());
      this.#partitions.delete(key);
    }
    return ids;
  }

  async snapshot(selector: SnapshotSelector): Promise<VectorSnapshot> {
    const parsed = parseOrThrow(SnapshotSelectorSchema, selector, 'snapshot selector');
    const records: VectorRecord[] = [];
    for (const partition of this.#partitions.values()) {
      if ('userId' in parsed && partition.userId !== parsed.userId) continue;
      for (const point of partition.points.values()) {
        records.push({
          userId: partition.userId,
          ...(partition.agentId === undefined ? {} : { agentId: partition.agentId }),
          id: point.id,
          kind: point.kind,
          vector: [...point.vector],
          payload: point.payload,
          ...(point.model === undefined ? {} : { model: point.model }),
        });
      }
    }
    return makeVectorSnapshot(parsed, this.dimensions, records, this.#clock);
  }

  async restore(snapshot: unknown, options: RestoreOptions = {}): Promise<RestoreReport> {
    const partitions = parseVectorSnapshot(snapshot, this.dimensions, options);
    let records = 0;
    for (const { userId, agentId, records: points } of partitions) {
      const stored = new Map(parseVectorPoints(points, this.dimensions).map((p) => [p.id, toStored(p)]));
      this.#partitions.set(partitionKey({ userId, agentId }), { userId, agentId, points: stored });
      records += points.length;
    }
    return { records, partitions: partitions.length };
  }
}

/** By model id; unlabelled points (`null`) last. */
export function sortModelCounts(counts: VectorModelCount[]): VectorModelCount[] {
  return counts.sort((a, b) =>
    a.model === b.model ? 0 : a.model === null ? 1 : b.model === null ? -1 : a.model < b.model ? -1 : 1,
  );
}
