import {
  type Clock,
  CorruptDataError,
  isKiokuError,
  type Scope,
  StorageError,
  ValidationError,
} from '@kioku/core';
import {
  assertDimensions,
  makeVectorSnapshot,
  parseOrThrow,
  parseScope,
  parseVectorIds,
  parseVectorSelection,
  parseVectorSnapshot,
  systemClock,
} from '@kioku/core/adapter';
import {
  type RestoreOptions,
  type RestoreReport,
  type SnapshotSelector,
  SnapshotSelectorSchema,
  type VectorHit,
  type VectorIndex,
  type VectorModelCount,
  type VectorPointInput,
  type VectorQuery,
  type VectorRecord,
  VectorRecordSchema,
  type VectorSelection,
  type VectorSnapshot,
} from '@kioku/core/store';
import { QdrantClient } from '@qdrant/js-client-rest';
import { FIELDS, INDEXED_FIELDS, type QdrantFilter, scopeFilter } from './payload.js';
import { pointId } from './point-id.js';
import { parsePoint, parseQuery } from './vector.js';

export interface QdrantVectorIndexOptions {
  /** A client you configured (API key, timeouts, headers); or give `url`. */
  client?: QdrantClient;
  /** Qdrant's REST URL, e.g. `http://localhost:6333` (when no `client` is given). */
  url?: string;
  /** API key for `url` (when no `client` is given). */
  apiKey?: string;
  /** The collection holding every kind's points (default `kioku_vectors`). */
  collection?: string;
  /** Size of the vectors (the embedder's `dimensions`). */
  dimensions: number;
  /** Points per upsert request and per scroll page (default 256). */
  batchSize?: number;
  /** Time source for snapshot timestamps (default the system clock). */
  clock?: Clock;
}

type Payload = Record<string, unknown>;
const isObject = (v: unknown): v is Payload => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The most distinct models `models()` reports for one scope. */
const MAX_MODELS = 1_000;

/**
 * Kioku's VectorIndex on Qdrant (REST, `@qdrant/js-client-rest`).
 *
 * One collection holds every kind (`kind` is a payload field): a VectorIndex has one `dimensions`, so
 * one collection of that size (cosine distance) is enough, and `setup()` has one thing to create.
 * Every point carries `user_id`, `agent_id` (absent without an agent), `kind`, `model` and `kioku_id`
 * with keyword payload indexes (`user_id` as the tenant key), and the caller's payload under `data`.
 * Every query, count, delete and scroll is filtered by the caller's scope; point ids are UUIDs derived
 * from scope + Kioku id (`pointId`), so another user's ids cannot even name this user's points.
 *
 * Call `setup()` once before use (it is idempotent).
 */
export class QdrantVectorIndex implements VectorIndex {
  readonly dimensions: number;
  readonly collection: string;
  readonly client: QdrantClient;
  readonly #batchSize: number;
  readonly #clock: Clock;

  constructor(options: QdrantVectorIndexOptions) {
    if (!Number.isInteger(options.dimensions) || options.dimensions < 1 || options.dimensions > 16_384) {
      throw new ValidationError('QdrantVectorIndex dimensions must be an integer from 1 to 16384.');
    }
    if (!options.client && !options.url) {
      throw new ValidationError('QdrantVectorIndex needs a `client` or a `url`.');
    }
    this.dimensions = options.dimensions;
    this.collection = options.collection ?? 'kioku_vectors';
    if (!/^[A-Za-z0-9_-]{1,255}$/.test(this.collection)) {
      throw new ValidationError('The collection name may contain only letters, digits, _ and -.');
    }
    this.client =
      options.client ??
      new QdrantClient({
        url: options.url!,
        ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
      });
    this.#batchSize = options.batchSize ?? 256;
    this.#clock = options.clock ?? systemClock;
  }

  /**
   * Create the collection (cosine, `dimensions`) and the payload indexes if they are missing; safe to
   * call again and from several processes at once. An existing collection of another vector size or
   * distance is a ValidationError: its vectors cannot be mixed with this index's.
   */
  async setup(): Promise<void> {
    await this.#call('setup', async () => {
      if (!(await this.client.collectionExists(this.collection)).exists) {
        try {
          await this.client.createCollection(this.collection, {
            vectors: { size: this.dimensions, distance: 'Cosine' },
          });
        } catch (error) {
          // Another process created it first: fine, as long as it exists now.
          if (!(await this.client.collectionExists(this.collection)).exists) throw error;
        }
      }
      const info = await this.client.getCollection(this.collection);
      const vectors = info.config.params.vectors;
      const size = isObject(vectors) && typeof vectors.size === 'number' ? vectors.size : undefined;
      const distance = isObject(vectors) ? vectors.distance : undefined;
      if (size !== this.dimensions || distance !== 'Cosine') {
        throw new ValidationError(
          `Qdrant collection "${this.collection}" holds ${size ?? 'named or multi'}-dimensional ${String(distance ?? '')} vectors; this index is configured for ${this.dimensions}-dimensional Cosine vectors. Use another collection (or reembed into a new one).`,
          {
            details: {
              collection: this.collection,
              expected: this.dimensions,
              actual: size ?? null,
              distance,
            },
          },
        );
      }
      const existing = info.payload_schema ?? {};
      for (const { field, tenant } of INDEXED_FIELDS) {
        if (existing[field]) continue;
        await this.client.createPayloadIndex(this.collection, {
          wait: true,
          field_name: field,
          field_schema: tenant ? { type: 'keyword', is_tenant: true } : 'keyword',
        });
      }
    });
  }

  async upsert(scope: Scope, points: VectorPointInput[]): Promise<void> {
    const s = parseScope(scope);
    // Validate every point before sending any.
    const parsed = points.map((p) => {
      const point = parsePoint(p);
      assertDimensions(point.vector, this.dimensions);
      return point;
    });
    const unique = new Map(parsed.map((p) => [p.id, p])); // the last of a repeated id wins, as in memory
    const qdrantPoints = [...unique.values()].map((p) => ({
      id: pointId(s, p.id),
      vector: p.vector,
      payload: this.#payload(s, p),
    }));
    await this.#call('upsert', async () => {
      for (let start = 0; start < qdrantPoints.length; start += this.#batchSize) {
        await this.client.upsert(this.collection, {
          wait: true,
          points: qdrantPoints.slice(start, start + this.#batchSize),
        });
      }
    });
  }

  async search(scope: Scope, query: VectorQuery): Promise<VectorHit[]> {
    const s = parseScope(scope);
    const q = parseQuery(query);
    assertDimensions(q.vector, this.dimensions);
    const result = await this.#call('query', () =>
      this.client.query(this.collection, {
        query: q.vector,
        filter: scopeFilter(s, { kind: q.kind, payload: q.filter }),
        limit: q.limit,
        ...(q.minScore === undefined ? {} : { score_threshold: q.minScore }),
        with_payload: true,
      }),
    );
    const hits: VectorHit[] = [];
    for (const point of result.points) {
      const payload = point.payload ?? {};
      // The filter already confines the query; this re-check costs nothing and guards the guarantee.
      if (payload[FIELDS.userId] !== s.userId || (payload[FIELDS.agentId] ?? undefined) !== s.agentId)
        continue;
      const record = this.#record(point.id, payload, []);
      hits.push({
        id: record.id,
        kind: record.kind,
        score: point.score,
        payload: record.payload,
        ...(record.model === undefined ? {} : { model: record.model }),
      });
    }
    return hits;
  }

  async delete(scope: Scope, ids: string[]): Promise<number> {
    const s = parseScope(scope);
    const unique = parseVectorIds(ids);
    if (unique.length === 0) return 0;
    const filter = scopeFilter(s, { ids: unique.map((id) => pointId(s, id)) });
    return this.#deleteWhere(filter);
  }

  async count(scope: Scope, selection: Pick<VectorSelection, 'kind'> = {}): Promise<number> {
    const s = parseScope(scope);
    const { kind } = parseVectorSelection(selection);
    return this.#count(scopeFilter(s, { kind }));
  }

  async models(scope: Scope, selection: Pick<VectorSelection, 'kind'> = {}): Promise<VectorModelCount[]> {
    const s = parseScope(scope);
    const { kind } = parseVectorSelection(selection);
    const filter = scopeFilter(s, { kind });
    const [facet, total] = await Promise.all([
      this.#call('models', () =>
        this.client.facet(this.collection, { key: FIELDS.model, filter, exact: true, limit: MAX_MODELS }),
      ),
      this.#count(filter),
    ]);
    const counts: VectorModelCount[] = facet.hits
      .filter((hit) => typeof hit.value === 'string')
      .map((hit) => ({ model: hit.value as string, count: hit.count }))
      .sort((a, b) => (a.model! < b.model! ? -1 : a.model! > b.model! ? 1 : 0));
    const labelled = counts.reduce((sum, c) => sum + c.count, 0);
    if (total > labelled) counts.push({ model: null, count: total - labelled });
    return counts;
  }

  async clear(scope: Scope, selection: VectorSelection = {}): Promise<number> {
    const s = parseScope(scope);
    const { kind, exceptModel } = parseVectorSelection(selection);
    return this.#deleteWhere(scopeFilter(s, { kind, exceptModel }));
  }

  /** The ids are read page by page (payloads only), then every point of the user goes in one filtered delete. */
  async eraseUser(userId: string): Promise<string[]> {
    parseOrThrow(SnapshotSelectorSchema, { userId }, 'user id');
    const filter = { must: [{ key: FIELDS.userId, match: { value: userId } }] };
    const ids: string[] = [];
    await this.#call('eraseUser', async () => {
      let offset: string | number | undefined;
      do {
        const page = await this.client.scroll(this.collection, {
          limit: this.#batchSize,
          with_payload: true,
          with_vector: false,
          filter,
          ...(offset === undefined ? {} : { offset }),
        });
        for (const point of page.points) ids.push(String(point.payload?.[FIELDS.id] ?? point.id));
        const next = page.next_page_offset;
        offset = typeof next === 'string' || typeof next === 'number' ? next : undefined;
      } while (offset !== undefined);
      if (ids.length > 0) await this.client.delete(this.collection, { wait: true, filter });
    });
    return ids;
  }

  async snapshot(selector: SnapshotSelector): Promise<VectorSnapshot> {
    const parsed = parseOrThrow(SnapshotSelectorSchema, selector, 'snapshot selector');
    const filter =
      'userId' in parsed ? { must: [{ key: FIELDS.userId, match: { value: parsed.userId } }] } : undefined;
    const records: VectorRecord[] = [];
    await this.#call('snapshot', async () => {
      let offset: string | number | undefined;
      do {
        const page = await this.client.scroll(this.collection, {
          limit: this.#batchSize,
          with_payload: true,
          with_vector: true,
          ...(filter ? { filter } : {}),
          ...(offset === undefined ? {} : { offset }),
        });
        for (const point of page.points)
          records.push(this.#record(point.id, point.payload ?? {}, point.vector));
        const next = page.next_page_offset;
        offset = typeof next === 'string' || typeof next === 'number' ? next : undefined;
      } while (offset !== undefined);
    });
    return makeVectorSnapshot(parsed, this.dimensions, records, this.#clock);
  }

  /**
   * Validates the whole snapshot first (dimensions included), then, partition by partition, deletes what
   * the partition holds and writes the snapshot's points. Not atomic across partitions: a failure part
   * way leaves the partitions before it restored.
   */
  async restore(snapshot: unknown, options: RestoreOptions = {}): Promise<RestoreReport> {
    const partitions = parseVectorSnapshot(snapshot, this.dimensions, options);
    let records = 0;
    for (const partition of partitions) {
      const scope = partition.agentId === undefined ? { userId: partition.userId } : partition;
      await this.#call('restore', () =>
        this.client.delete(this.collection, { wait: true, filter: scopeFilter(scope) }),
      );
      await this.upsert(scope, partition.records);
      records += partition.records.length;
    }
    return { records, partitions: partitions.length };
  }

  #payload(scope: Scope, point: { id: string; kind: string; payload: Payload; model?: string | undefined }) {
    return {
      [FIELDS.id]: point.id,
      [FIELDS.kind]: point.kind,
      [FIELDS.userId]: scope.userId,
      ...(scope.agentId === undefined ? {} : { [FIELDS.agentId]: scope.agentId }),
      ...(point.model === undefined ? {} : { [FIELDS.model]: point.model }),
      [FIELDS.data]: point.payload,
    };
  }

  /** A stored point as a Kioku record; a point Kioku did not write is CORRUPT_DATA, never guessed at. */
  #record(id: unknown, payload: Payload, vector: unknown): VectorRecord {
    const parsed = VectorRecordSchema.safeParse({
      id: payload[FIELDS.id],
      kind: payload[FIELDS.kind],
      userId: payload[FIELDS.userId],
      ...(payload[FIELDS.agentId] === undefined || payload[FIELDS.agentId] === null
        ? {}
        : { agentId: payload[FIELDS.agentId] }),
      ...(payload[FIELDS.model] === undefined ? {} : { model: payload[FIELDS.model] }),
      payload: payload[FIELDS.data] ?? {},
      vector: Array.isArray(vector) && vector.length > 0 ? vector : [0],
    });
    if (!parsed.success) {
      throw new CorruptDataError(
        `Qdrant point ${String(id)} in collection "${this.collection}" is not a Kioku vector point.`,
        { details: { collection: this.collection, pointId: id, issues: parsed.error.issues.slice(0, 5) } },
      );
    }
    return parsed.data;
  }

  async #count(filter: QdrantFilter): Promise<number> {
    const result = await this.#call('count', () =>
      this.client.count(this.collection, { filter, exact: true }),
    );
    return result.count;
  }

  /**
   * Qdrant's delete does not say how many points it removed: they are counted (exactly) first. Two
   * concurrent deletes of the same point may therefore both count it.
   */
  async #deleteWhere(filter: QdrantFilter): Promise<number> {
    const n = await this.#count(filter);
    if (n === 0) return 0;
    await this.#call('delete', () => this.client.delete(this.collection, { wait: true, filter }));
    return n;
  }

  /** Run a client call; Qdrant's errors become KiokuErrors (VALIDATION for bad input, else STORAGE). */
  async #call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      if (isKiokuError(error)) throw error;
      const status = isObject(error) && typeof error.status === 'number' ? error.status : undefined;
      const data = isObject(error) ? error.data : undefined;
      const detail =
        isObject(data) && isObject(data.status) && typeof data.status.error === 'string'
          ? data.status.error
          : error instanceof Error
            ? error.message
            : String(error);
      const details = { collection: this.collection, operation: what, status: status ?? null, error: detail };
      if (status === 400 && /dimension/i.test(detail)) {
        throw new ValidationError(`Qdrant refused the vectors: ${detail}`, { cause: error, details });
      }
      if (status === 404) {
        throw new StorageError(
          `Qdrant ${what} failed: ${detail} (did you call setup() for collection "${this.collection}"?)`,
          { cause: error, details },
        );
      }
      throw new StorageError(`Qdrant ${what} failed: ${detail}`, { cause: error, details });
    }
  }
}
