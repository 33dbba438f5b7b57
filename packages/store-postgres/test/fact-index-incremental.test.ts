import postgres, { type Sql } from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { FactSearch } from '../src/fact-search.js';
import { PostgresFactStore } from '../src/index.js';
import { dropSchema, endSharedClient, freshSchema, noServer, pgUrl, sharedClient } from './helpers.js';

/*
 * A process's cached search index of a small partition moves on with only the rows written since the revision
 * it holds (`fact_revisions.changes`, migration 0014). Whoever wrote them (another process, raw SQL), its next
 * search must rank exactly as an index read whole would, and a deleted fact must never come back.
 */

const scope = { userId: 'u1' };
const request = { userId: 'u1', agentId: '', limit: 10 };

describe.skipIf(noServer)('PostgreSQL fact search: the cached index moved on incrementally', () => {
  const schemas: string[] = [];
  const clients: Sql[] = [];
  afterAll(async () => {
    for (const client of clients) await client.end({ timeout: 5 });
    for (const schema of schemas) await dropSchema(schema);
    await endSharedClient();
  });

  function client(): Sql {
    const c = postgres(pgUrl, { max: 4, onnotice: () => {} });
    clients.push(c);
    return c;
  }

  /** A schema with some facts, a store writing on its own client (another process), and a searcher. */
  async function setup() {
    const schema = freshSchema();
    schemas.push(schema);
    const writer = new PostgresFactStore({ client: client(), schema });
    await writer.setup();
    for (const content of ['Ann drinks green tea', 'Bob plays the cello', 'Dora visited Kyoto in spring'])
      await writer.create(scope, { content });
    const search = new FactSearch(client(), schema);
    /** The ranking of an index read whole (a fresh cache), to compare with. */
    const whole = (query: string) => new FactSearch(sharedClient(), schema).search(request, query);
    return { schema, writer, search, whole };
  }

  it('sees another process create, edit and delete facts, reading only those rows, and ranks as a fresh index', async () => {
    const { writer, search, whole } = await setup();
    expect((await search.search(request, 'tea')).hits).toEqual((await whole('tea')).hits);

    const coffee = await writer.create(scope, { content: 'Ann likes coffee, never tea after noon' });
    let result = await search.search(request, 'tea');
    expect(result.advanced?.changed).toEqual([coffee.id]);
    expect(result.hits).toEqual((await whole('tea')).hits);
    expect(result.hits.map((h) => h.id)).toContain(coffee.id);

    await writer.update(scope, coffee.id, { content: 'Ann drinks only water' });
    result = await search.search(request, 'tea');
    expect(result.advanced?.changed).toEqual([coffee.id]);
    expect(result.hits).toEqual((await whole('tea')).hits);
    expect((await search.search(request, 'water')).hits.map((h) => h.id)).toContain(coffee.id);

    await writer.delete(scope, coffee.id);
    for (const query of ['water', 'Ann likes']) {
      const hits = (await search.search(request, query)).hits;
      expect(hits.map((h) => h.id)).not.toContain(coffee.id);
      expect(hits).toEqual((await whole(query)).hits);
    }
  });

  it('a forgotten fact is never returned by the store that had it in its cached index and records', async () => {
    const { schema, writer } = await setup();
    const reader = new PostgresFactStore({ client: client(), schema });
    const doomed = await writer.create(scope, { content: 'the secret code is 4711' });
    expect((await reader.search(scope, { query: 'secret code' }))[0]?.fact.id).toBe(doomed.id);
    // Another write after the deletion: the next search moves on over both.
    await writer.delete(scope, doomed.id);
    const other = await writer.create(scope, { content: 'the secret garden is a book' });
    const ids = (await reader.search(scope, { query: 'secret code' })).map((h) => h.fact.id);
    expect(ids).toContain(other.id);
    expect(ids).not.toContain(doomed.id);
  });

  it('a record edited by another process is read again, not served from the cached records', async () => {
    const { schema, writer } = await setup();
    const reader = new PostgresFactStore({ client: client(), schema });
    const fact = await writer.create(scope, { content: 'Carol likes jazz and tea' });
    expect((await reader.search(scope, { query: 'jazz' }))[0]?.fact.content).toBe('Carol likes jazz and tea');
    await writer.update(scope, fact.id, { content: 'Carol likes jazz and coffee' });
    await writer.create(scope, { content: 'unrelated note' });
    expect((await reader.search(scope, { query: 'jazz' }))[0]?.fact.content).toBe(
      'Carol likes jazz and coffee',
    );
  });

  it('reads the partition whole when the writes are not all listed: raw SQL bursts, over 8 statements, over 64 rows', async () => {
    const { schema, writer, search, whole } = await setup();
    const host = client();
    await search.search(request, 'tea');
    // Raw SQL (no search terms written): listed like any write, and unmatched by a search.
    await host.unsafe(
      `insert into "${schema}".facts (user_id, id, content, category, tags, tag_keys, metadata, provenance, created_at, updated_at)
       values ('u1', 'raw', 'raw tea', 'misc', '[]', '{}', '{}', '{"source":"import"}', now(), now())`,
    );
    let result = await search.search(request, 'tea');
    expect(result.advanced?.changed).toEqual(['raw']);
    expect(result.hits).toEqual((await whole('tea')).hits);

    for (let i = 0; i < 10; i++) await writer.create(scope, { content: `tea note ${i}` });
    result = await search.search(request, 'tea');
    expect(result.advanced).toBeUndefined();
    expect(result.hits).toEqual((await whole('tea')).hits);
    expect(result.hits).toHaveLength(10);

    await host.unsafe(
      `insert into "${schema}".facts (user_id, id, content, category, tags, tag_keys, metadata, provenance, created_at, updated_at, search_terms, search_length)
       select 'u1', 'bulk-' || i, 'tea', 'misc', '[]', '{}', '{}', '{"source":"import"}', now(), now(), 'tea', 1
       from generate_series(1, 100) as i`,
    );
    result = await search.search(request, 'tea');
    expect(result.advanced).toBeUndefined();
    expect(result.hits).toEqual((await whole('tea')).hits);
    expect(await writer.count(scope)).toBe(3 + 1 + 10 + 100);
  });

  it('reads the partition whole after eraseUser and a truncate', async () => {
    const { schema, writer, search } = await setup();
    expect((await search.search(request, 'tea')).hits).toHaveLength(3); // the category matches too
    await writer.eraseUser('u1');
    expect((await search.search(request, 'tea')).hits).toEqual([]);
    const fact = await writer.create(scope, { content: 'tea again' });
    expect((await search.search(request, 'tea')).hits.map((h) => h.id)).toEqual([fact.id]);
    await writer.delete(scope, fact.id);
    await sharedClient().unsafe(`truncate "${schema}".facts`);
    expect((await search.search(request, 'tea')).hits).toEqual([]);
  });
});
