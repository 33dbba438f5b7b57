import {
  BadRequest,
  facetValues,
  filterMatches,
  hasPath,
  normalizeId,
  type PointId,
  type StoredPoint,
  Unsupported,
} from './filter.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An error Qdrant answers with this status and `{ status: { error } }`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

interface Collection {
  size: number;
  distance: 'Cosine' | 'Dot' | 'Euclid' | 'Manhattan';
  points: Map<string, StoredPoint>;
  /** Payload indexes: field → its schema as given. */
  indexes: Map<string, { type: string; params: Obj | null }>;
  version: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function checkId(id: unknown): PointId {
  if (typeof id === 'number' && Number.isInteger(id) && id >= 0) return id;
  if (typeof id === 'string' && UUID.test(id)) return id.toLowerCase();
  throw new BadRequest(
    `Unable to parse point id ${JSON.stringify(id)}: must be an unsigned integer or a UUID`,
  );
}

/** Qdrant's id order: integers first (numerically), then UUIDs (by value, i.e. as lower-case hex). */
function compareIds(a: PointId, b: PointId): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'number') return -1;
  if (typeof b === 'number') return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

function score(distance: Collection['distance'], a: number[], b: number[]): number {
  let s = 0;
  switch (distance) {
    case 'Cosine':
    case 'Dot':
      for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
      return s;
    case 'Euclid':
      for (let i = 0; i < a.length; i++) s += (a[i]! - b[i]!) ** 2;
      return Math.sqrt(s);
    case 'Manhattan':
      for (let i = 0; i < a.length; i++) s += Math.abs(a[i]! - b[i]!);
      return s;
  }
}

/** Cosine collections keep unit vectors, as Qdrant does (a zero vector stays zero). */
function prepare(distance: Collection['distance'], vector: number[]): number[] {
  if (distance !== 'Cosine') return [...vector];
  const norm = Math.hypot(...vector);
  return norm < Number.EPSILON ? [...vector] : vector.map((x) => Math.fround(x / norm));
}

function withPayload(point: StoredPoint, selector: unknown): Obj | null | undefined {
  if (selector === undefined || selector === null || selector === false) return undefined;
  if (selector === true) return point.payload;
  if (Array.isArray(selector)) {
    return Object.fromEntries(Object.entries(point.payload).filter(([k]) => selector.includes(k)));
  }
  throw new Unsupported('payload selectors other than true/false/field lists');
}

const updateResult = (operationId: number) => ({ operation_id: operationId, status: 'completed' });

/** The collections of one test server, in memory, with the semantics of the endpoints it implements. */
export class Collections {
  readonly #collections = new Map<string, Collection>();
  #operation = 0;

  #get(name: string): Collection {
    const collection = this.#collections.get(name);
    if (!collection) throw new HttpError(404, `Not found: Collection \`${name}\` doesn't exist!`);
    return collection;
  }

  /** Runs the operation; returns its `result`. */
  /** Query parameters (wait, ordering, timeout, consistency) change nothing: every write completes at once. */
  handle(operationId: string, params: Record<string, string>, body: unknown): unknown {
    const name = params.collection_name ?? '';
    const b = (isObj(body) ? body : {}) as Obj;
    switch (operationId) {
      case 'collection_exists':
        return { exists: this.#collections.has(name) };
      case 'create_collection':
        return this.#create(name, b);
      case 'delete_collection':
        return this.#collections.delete(name);
      case 'get_collection':
        return this.#info(this.#get(name));
      case 'create_field_index':
        return this.#index(this.#get(name), b);
      case 'upsert_points':
        return this.#upsert(this.#get(name), b);
      case 'delete_points':
        return this.#delete(this.#get(name), b);
      case 'count_points':
        return { count: this.#matching(this.#get(name), b.filter as Obj).length };
      case 'scroll_points':
        return this.#scroll(this.#get(name), b);
      case 'query_points':
        return this.#query(this.#get(name), b);
      case 'facet':
        return this.#facet(this.#get(name), b);
      case 'get_points':
        return this.#retrieve(this.#get(name), b);
      default:
        throw new Unsupported(`operation ${operationId}`);
    }
  }

  #create(name: string, body: Obj): boolean {
    if (this.#collections.has(name))
      throw new HttpError(409, `Wrong input: Collection \`${name}\` already exists!`);
    const vectors = body.vectors;
    if (!isObj(vectors) || typeof vectors.size !== 'number' || typeof vectors.distance !== 'string') {
      throw new Unsupported('collections without one unnamed dense vector');
    }
    this.#collections.set(name, {
      size: vectors.size,
      distance: vectors.distance as Collection['distance'],
      points: new Map(),
      indexes: new Map(),
      version: 0,
    });
    return true;
  }

  #info(c: Collection): Obj {
    const payloadSchema: Obj = {};
    for (const [field, { type, params }] of c.indexes) {
      let points = 0;
      for (const p of c.points.values()) if (hasPath(p.payload, field)) points++;
      payloadSchema[field] = { data_type: type, ...(params ? { params } : {}), points };
    }
    return {
      status: 'green',
      optimizer_status: 'ok',
      indexed_vectors_count: 0,
      points_count: c.points.size,
      segments_count: 1,
      config: {
        params: {
          vectors: { size: c.size, distance: c.distance },
          shard_number: 1,
          replication_factor: 1,
          write_consistency_factor: 1,
          on_disk_payload: true,
        },
        hnsw_config: { m: 16, ef_construct: 100, full_scan_threshold: 10_000, max_indexing_threads: 0 },
        optimizer_config: {
          deleted_threshold: 0.2,
          vacuum_min_vector_number: 1000,
          default_segment_number: 0,
          max_segment_size: null,
          indexing_threshold: 10_000,
          flush_interval_sec: 5,
          max_optimization_threads: null,
        },
        wal_config: { wal_capacity_mb: 32, wal_segments_ahead: 0 },
        quantization_config: null,
      },
      payload_schema: payloadSchema,
    };
  }

  #index(c: Collection, body: Obj): Obj {
    const schema = body.field_schema;
    const type = typeof schema === 'string' ? schema : isObj(schema) ? String(schema.type) : undefined;
    if (!type) throw new BadRequest('field_schema is required');
    c.indexes.set(String(body.field_name), { type, params: isObj(schema) ? schema : null });
    return updateResult(++this.#operation);
  }

  #checkVector(c: Collection, vector: unknown): number[] {
    if (!Array.isArray(vector) || !vector.every((x) => typeof x === 'number')) {
      throw new Unsupported('vectors other than one unnamed dense vector');
    }
    if (vector.length !== c.size) {
      throw new HttpError(
        400,
        `Wrong input: Vector dimension error: expected dim: ${c.size}, got ${vector.length}`,
      );
    }
    return vector as number[];
  }

  #upsert(c: Collection, body: Obj): Obj {
    if (body.update_filter || body.update_mode || body.shard_key)
      throw new Unsupported('conditional upserts');
    let points: Array<{ id: unknown; vector: unknown; payload: unknown }>;
    if (Array.isArray(body.points)) points = body.points as typeof points;
    else if (isObj(body.batch)) {
      const { ids, vectors, payloads } = body.batch as {
        ids: unknown[];
        vectors: unknown[];
        payloads?: unknown[];
      };
      if (!Array.isArray(vectors) || vectors.length !== ids.length)
        throw new BadRequest('batch sizes differ');
      points = ids.map((id, i) => ({ id, vector: vectors[i], payload: payloads?.[i] }));
    } else throw new BadRequest('points or batch required');
    // Validate all, then apply all: Qdrant rejects a batch with a bad point as a whole.
    const prepared = points.map((p) => ({
      id: checkId(p.id),
      vector: prepare(c.distance, this.#checkVector(c, p.vector)),
      payload: isObj(p.payload) ? structuredClone(p.payload) : {},
    }));
    c.version++;
    for (const p of prepared) c.points.set(normalizeId(p.id), { ...p, version: c.version });
    return updateResult(++this.#operation);
  }

  #matching(c: Collection, filter: Obj | null | undefined): StoredPoint[] {
    return [...c.points.values()].filter((p) => filterMatches(p, filter));
  }

  #delete(c: Collection, body: Obj): Obj {
    if (body.shard_key) throw new Unsupported('shard keys');
    if (Array.isArray(body.points)) {
      for (const id of body.points) c.points.delete(normalizeId(checkId(id)));
    } else if (isObj(body.filter)) {
      for (const p of this.#matching(c, body.filter)) c.points.delete(normalizeId(p.id));
    } else throw new BadRequest('points or filter required');
    c.version++;
    return updateResult(++this.#operation);
  }

  #render(p: StoredPoint, withPayloadSelector: unknown, withVector: unknown): Obj {
    const payload = withPayload(p, withPayloadSelector);
    return {
      id: p.id,
      ...(payload === undefined ? {} : { payload }),
      ...(withVector === true ? { vector: p.vector } : {}),
    };
  }

  #scroll(c: Collection, body: Obj): Obj {
    if (body.order_by) throw new Unsupported('scroll order_by');
    const limit = typeof body.limit === 'number' ? body.limit : 10;
    const sorted = this.#matching(c, body.filter as Obj).sort((a, b) => compareIds(a.id, b.id));
    const offset = body.offset === undefined || body.offset === null ? undefined : checkId(body.offset);
    const start = offset === undefined ? 0 : sorted.findIndex((p) => compareIds(p.id, offset) >= 0);
    const page = start < 0 ? [] : sorted.slice(start, start + limit);
    const next = start < 0 ? undefined : sorted[start + limit];
    return {
      points: page.map((p) => this.#render(p, body.with_payload ?? true, body.with_vector ?? false)),
      next_page_offset: next ? next.id : null,
    };
  }

  #query(c: Collection, body: Obj): Obj {
    if (body.prefetch || body.using || body.lookup_from || body.shard_key) {
      throw new Unsupported('prefetch, named vectors, lookups and shard keys');
    }
    let vector = body.query;
    if (isObj(vector) && 'nearest' in vector) {
      if (vector.mmr) throw new Unsupported('MMR');
      vector = vector.nearest;
    }
    const q = prepare(c.distance, this.#checkVector(c, vector));
    const higherIsBetter = c.distance === 'Cosine' || c.distance === 'Dot';
    const threshold = typeof body.score_threshold === 'number' ? body.score_threshold : undefined;
    const scored = this.#matching(c, body.filter as Obj)
      .map((p) => ({ p, s: Math.fround(score(c.distance, q, p.vector)) }))
      .filter(({ s }) => threshold === undefined || (higherIsBetter ? s >= threshold : s <= threshold))
      .sort((a, b) => (higherIsBetter ? b.s - a.s : a.s - b.s) || compareIds(a.p.id, b.p.id));
    const offset = typeof body.offset === 'number' ? body.offset : 0;
    const limit = typeof body.limit === 'number' ? body.limit : 10;
    return {
      points: scored.slice(offset, offset + limit).map(({ p, s }) => ({
        ...this.#render(p, body.with_payload ?? false, body.with_vector ?? false),
        version: p.version,
        score: s,
      })),
    };
  }

  #facet(c: Collection, body: Obj): Obj {
    const key = String(body.key);
    if (!c.indexes.has(key)) {
      throw new HttpError(
        400,
        `Bad request: Index required but not found for "${key}" of one of the following types: [keyword, integer, bool]`,
      );
    }
    const counts = new Map<string | number | boolean, number>();
    for (const p of this.#matching(c, body.filter as Obj)) {
      for (const v of facetValues(p, key)) counts.set(v, (counts.get(v) ?? 0) + 1);
    }
    const limit = typeof body.limit === 'number' ? body.limit : 10;
    const hits = [...counts]
      .map(([value, count]) => ({ value, count }))
      .sort((a, b) => b.count - a.count || String(a.value).localeCompare(String(b.value)))
      .slice(0, limit);
    return { hits };
  }

  #retrieve(c: Collection, body: Obj): Obj[] {
    const ids = Array.isArray(body.ids) ? body.ids : [];
    return ids
      .map((id) => c.points.get(normalizeId(checkId(id))))
      .filter((p): p is StoredPoint => p !== undefined)
      .map((p) => this.#render(p, body.with_payload ?? true, body.with_vector ?? false));
  }

  /** Names of the collections, for tests. */
  names(): string[] {
    return [...this.#collections.keys()];
  }
}
