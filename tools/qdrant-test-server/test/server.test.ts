import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  defaultOpenApiPath,
  filterMatches,
  OpenApiSpec,
  type QdrantTestServer,
  type StoredPoint,
  startQdrantTestServer,
  toJsonSchema,
} from '../src/index.js';

let server: QdrantTestServer;

beforeAll(async () => {
  server = await startQdrantTestServer();
});

afterAll(async () => {
  await server.stop();
});

beforeEach(() => {
  server.violations.length = 0;
});

async function call(method: string, path: string, body?: unknown) {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const UUID_A = '00000000-0000-4000-8000-00000000000a';
const UUID_B = '00000000-0000-4000-8000-00000000000b';

describe('the schema', () => {
  it('is read from the copy in this package, so a plain clone needs nothing beside the repository', () => {
    expect(defaultOpenApiPath()).toMatch(/tools\/qdrant-test-server\/openapi\/qdrant-openapi\.json$/);
    expect(server.spec.operations.length).toBeGreaterThan(50);
  });

  it('says where it looked when the file is missing', () => {
    expect(() => new OpenApiSpec('/nonexistent/openapi.json')).toThrow(/QDRANT_OPENAPI_SCHEMA/);
  });

  it('turns OpenAPI nullable into JSON Schema null types (a bare {nullable} must not accept everything)', () => {
    expect(toJsonSchema({ nullable: true })).toEqual({ type: 'null' });
    expect(toJsonSchema({ type: 'integer', nullable: true })).toEqual({ type: ['integer', 'null'] });
    expect(toJsonSchema({ type: 'string', enum: ['a'], nullable: true })).toEqual({
      type: ['string', 'null'],
      enum: ['a', null],
    });
    expect(toJsonSchema({ $ref: '#/components/schemas/Filter', nullable: true, example: 1 })).toEqual({
      anyOf: [{ $ref: 'https://kioku.invalid/qdrant-openapi.json#/$defs/Filter' }, { type: 'null' }],
    });
  });

  it('validates responses too: a count below zero or a missing result field is refused', () => {
    const count = server.spec.match('POST', '/collections/c/points/count')!.operation;
    const validate = server.spec.responseValidator(count, 200)!;
    expect(validate({ result: { count: 3 }, status: 'ok', time: 0.001 })).toBe(true);
    expect(validate({ result: { count: -1 }, status: 'ok', time: 0.001 })).toBe(false);
    expect(validate({ result: {}, status: 'ok', time: 0.001 })).toBe(false);
    expect(server.spec.responseValidator(count, 404)).toBeTypeOf('function');
  });
});

describe('requests', () => {
  it('valid requests are served and leave no violation', async () => {
    expect((await call('PUT', '/collections/v1', { vectors: { size: 3, distance: 'Cosine' } })).status).toBe(
      200,
    );
    const upsert = await call('PUT', '/collections/v1/points?wait=true', {
      points: [
        { id: UUID_A, vector: [1, 0, 0], payload: { user_id: 'u', tags: ['x', 'y'] } },
        { id: 5, vector: [0, 2, 0], payload: { user_id: 'v' } },
      ],
    });
    expect(upsert.body.result).toEqual({ operation_id: expect.any(Number), status: 'completed' });
    const query = await call('POST', '/collections/v1/points/query', {
      query: [2, 0, 0],
      filter: { must: [{ key: 'user_id', match: { value: 'u' } }] },
      with_payload: true,
      limit: 5,
    });
    expect(query.body.result).toEqual({
      points: [
        { id: UUID_A, version: expect.any(Number), score: 1, payload: { user_id: 'u', tags: ['x', 'y'] } },
      ],
    });
    const count = await call('POST', '/collections/v1/points/count', {
      filter: { must: { key: 'tags', match: { value: 'y' } } },
    });
    expect(count.body.result).toEqual({ count: 1 });
    expect((await call('GET', '/collections/v1')).status).toBe(200);
    expect(server.violations).toEqual([]);
  });

  it('a body that does not match the schema is answered 400 and recorded', async () => {
    await call('PUT', '/collections/v2', { vectors: { size: 3, distance: 'Cosine' } });
    const typo = await call('POST', '/collections/v2/points/count', {
      filter: { must: [{ key: 'user_id', match: { valeu: 'u' } }] },
    });
    expect(typo.status).toBe(400);
    const wrongType = await call('PUT', '/collections/v2/points', {
      points: [{ id: 'not-a-uuid', vector: [1, 2, 3] }],
    });
    expect(wrongType.status).toBe(400);
    const unknownField = await call('POST', '/collections/v2/points/scroll', { filter: { mustt: [] } });
    expect(unknownField.status).toBe(400);
    expect(server.violations.map((v) => [v.kind, v.operationId])).toEqual([
      ['request', 'count_points'],
      ['request', 'upsert_points'],
      ['request', 'scroll_points'],
    ]);
    expect(server.violations[0]!.errors.join('\n')).toMatch(/filter\/must/);
    expect(server.report()).toMatch(/count_points/);
  });

  it('bad query parameters, non-JSON bodies and unknown endpoints are recorded', async () => {
    await call('PUT', '/collections/v3', { vectors: { size: 3, distance: 'Cosine' } });
    expect((await call('PUT', '/collections/v3/points?wait=maybe', { points: [] })).status).toBe(400);
    expect((await call('PUT', '/collections/v3/points?colour=red', { points: [] })).status).toBe(400);
    expect((await call('POST', '/collections/v3/points/count', '{not json')).status).toBe(400);
    expect((await call('POST', '/collections/v3/points/search', { vector: [1, 0, 0] })).status).toBe(404);
    expect(server.violations.map((v) => v.kind)).toEqual([
      'request',
      'request',
      'request',
      'unknown-endpoint',
    ]);
  });

  it('features the server does not implement are answered 501 and recorded', async () => {
    await call('PUT', '/collections/v4', { vectors: { size: 3, distance: 'Cosine' } });
    const prefetch = await call('POST', '/collections/v4/points/query', {
      prefetch: { query: [1, 0, 0] },
      query: [1, 0, 0],
    });
    expect(prefetch.status).toBe(501);
    expect(server.violations.map((v) => v.kind)).toEqual(['unsupported']);
  });

  it('a response that would not match the schema is replaced by a 500 and recorded', async () => {
    await call('PUT', '/collections/v6', { vectors: { size: 2, distance: 'Cosine' } });
    const handle = server.collections.handle.bind(server.collections);
    server.collections.handle = (operationId, params, body) =>
      operationId === 'count_points' ? { count: -1 } : handle(operationId, params, body);
    try {
      const count = await call('POST', '/collections/v6/points/count', {});
      expect(count.status).toBe(500);
    } finally {
      server.collections.handle = handle;
    }
    expect(server.violations.map((v) => [v.kind, v.operationId])).toEqual([['response', 'count_points']]);
    expect(server.violations[0]!.errors.join('\n')).toMatch(/count/);
  });

  it('answers like Qdrant: dimension errors, missing collections, scroll pages, facets need an index', async () => {
    await call('PUT', '/collections/v5', { vectors: { size: 2, distance: 'Cosine' } });
    const dims = await call('PUT', '/collections/v5/points?wait=true', {
      points: [{ id: 1, vector: [1, 2, 3] }],
    });
    expect(dims.status).toBe(400);
    expect(JSON.stringify(dims.body)).toMatch(/Vector dimension error: expected dim: 2, got 3/);
    expect((await call('POST', '/collections/nope/points/count', {})).status).toBe(404);
    await call('PUT', '/collections/v5/points?wait=true', {
      points: [UUID_B, 3, UUID_A, 1].map((id) => ({
        id,
        vector: [1, 1],
        payload: { m: id === 1 ? 'a' : 'b' },
      })),
    });
    const first = await call('POST', '/collections/v5/points/scroll', { limit: 3 });
    const page = first.body.result as { points: Array<{ id: unknown }>; next_page_offset: unknown };
    expect(page.points.map((p) => p.id)).toEqual([1, 3, UUID_A]);
    expect(page.next_page_offset).toBe(UUID_B);
    const facetWithout = await call('POST', '/collections/v5/facet', { key: 'm' });
    expect(facetWithout.status).toBe(400);
    await call('PUT', '/collections/v5/index?wait=true', { field_name: 'm', field_schema: 'keyword' });
    const facet = await call('POST', '/collections/v5/facet', { key: 'm', exact: true });
    expect(facet.body.result).toEqual({
      hits: [
        { value: 'b', count: 3 },
        { value: 'a', count: 1 },
      ],
    });
    expect(server.violations).toEqual([]);
  });
});

describe('filters', () => {
  const point = (payload: Record<string, unknown>, id: string | number = 1): StoredPoint => ({
    id,
    vector: [1],
    payload,
    version: 0,
  });
  const p = point({ user_id: 'u', agent_id: 'a', tags: ['x', 'y'], data: { n: 2, on: true }, empty: [] });

  it('must, must_not, should, min_should, nested filters', () => {
    expect(
      filterMatches(p, {
        must: [
          { key: 'user_id', match: { value: 'u' } },
          { key: 'agent_id', match: { value: 'a' } },
        ],
      }),
    ).toBe(true);
    expect(filterMatches(p, { must: [{ key: 'user_id', match: { value: 'U' } }] })).toBe(false);
    expect(filterMatches(p, { must_not: [{ key: 'tags', match: { value: 'x' } }] })).toBe(false);
    expect(
      filterMatches(p, {
        should: [
          { key: 'tags', match: { value: 'z' } },
          { key: 'tags', match: { any: ['y'] } },
        ],
      }),
    ).toBe(true);
    expect(filterMatches(p, { should: [{ key: 'tags', match: { value: 'z' } }] })).toBe(false);
    expect(
      filterMatches(p, {
        min_should: {
          conditions: [
            { key: 'tags', match: { value: 'x' } },
            { key: 'tags', match: { value: 'q' } },
          ],
          min_count: 2,
        },
      }),
    ).toBe(false);
    expect(filterMatches(p, { must: [{ must_not: [{ key: 'user_id', match: { value: 'v' } }] }] })).toBe(
      true,
    );
  });

  it('nested keys, exact values, is_empty, has_id, except, range', () => {
    expect(
      filterMatches(p, {
        must: [
          { key: 'data.n', match: { value: 2 } },
          { key: 'data.on', match: { value: true } },
        ],
      }),
    ).toBe(true);
    expect(filterMatches(p, { must: [{ key: 'data.n', match: { value: '2' } }] })).toBe(false);
    expect(
      filterMatches(p, { must: [{ is_empty: { key: 'missing' } }, { is_empty: { key: 'empty' } }] }),
    ).toBe(true);
    expect(filterMatches(p, { must: [{ is_empty: { key: 'agent_id' } }] })).toBe(false);
    expect(filterMatches(point({}, UUID_A.toUpperCase()), { must: [{ has_id: [UUID_A] }] })).toBe(true);
    expect(filterMatches(p, { must: [{ has_id: [2, UUID_A] }] })).toBe(false);
    expect(filterMatches(p, { must: [{ key: 'user_id', match: { except: ['u'] } }] })).toBe(false);
    expect(filterMatches(p, { must: [{ key: 'data.n', range: { gt: 1, lte: 2 } }] })).toBe(true);
  });
});
