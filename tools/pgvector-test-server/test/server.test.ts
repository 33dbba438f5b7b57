import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PgvectorTestServer, startPgvectorTestServer } from '../src/index.js';

describe('PGlite with pgvector over the wire protocol', () => {
  let server: PgvectorTestServer;
  beforeAll(async () => {
    server = await startPgvectorTestServer();
  });
  afterAll(() => server.stop());

  it('serves postgres.js: CREATE EXTENSION vector, an HNSW index and a cosine query, from two clients', async () => {
    const a = postgres(server.url, { max: 2, onnotice: () => {} });
    const b = postgres(server.url, { max: 1, onnotice: () => {} });
    try {
      await a`create extension if not exists vector`;
      await a`create table items (id int primary key, embedding vector(3))`;
      await a`create index on items using hnsw (embedding vector_cosine_ops)`;
      await b`insert into items values (1, '[1,0,0]'), (2, '[0,1,0]'), (3, '[1,1,0]')`;
      const rows = await a<
        { id: number }[]
      >`select id from items order by embedding <=> ${'[1,0.1,0]'}::vector limit 2`;
      expect(rows.map((r) => r.id)).toEqual([1, 3]);
      const [row] = await b<
        { v: string }[]
      >`select extversion as v from pg_extension where extname = 'vector'`;
      expect(row?.v).toMatch(/^0\.(8|9)|^[1-9]/);
    } finally {
      await a.end();
      await b.end();
    }
  });
});
