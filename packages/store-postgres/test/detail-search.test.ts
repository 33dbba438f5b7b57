import postgres from 'postgres';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { PostgresDetailStore } from '../src/index.js';
import { matchTerms, queryLexemes } from '../src/search.js';
import { countingClient, dropSchema, endSharedClient, freshSchema, noServer, pgUrl } from './helpers.js';

// Texts and queries with what tsquery syntax gives meaning to: quotes, backslashes, operators, prefixes.
const TEXTS = [
  "O'Reilly's notes on the deploy script",
  'A path with a back\\slash: C:\\deploy\\run.ps1',
  'The deploy failed: error & warning | retry !now',
  'Weekly report: deploy counts, error rates, retries',
  "quote's 'inside' quotes and :* prefixes <-> phrases",
];
const QUERIES = [
  "What did O'Reilly say about the deploy?",
  'back\\slash deploy',
  'error & warning | !retry :*',
  "'inside' quote's",
  'deploy',
  'the of and',
  '?! ... :*',
];

describe.skipIf(noServer)('detail search analyses the query in the same statement', () => {
  const cleanup: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
  });
  afterAll(endSharedClient);

  async function detailStore() {
    const { client, sent } = countingClient(cleanup);
    const schema = freshSchema();
    cleanup.push(() => dropSchema(schema));
    const store = new PostgresDetailStore({ client, schema });
    await store.setup();
    return { store, schema, client, statements: () => sent.length };
  }

  it('ranks exactly as analysing the query first, hostile queries included, in one statement', async () => {
    const { store, schema, client, statements } = await detailStore();
    const scope = { userId: 'u1' };
    const ids: string[] = [];
    for (const [i, text] of TEXTS.entries())
      ids.push((await store.create(scope, { description: `note ${i}`, content: text })).id);
    for (const query of QUERIES) {
      // The two-statement ranking this replaces: lexemes first, then the match on them.
      const lexemes = await queryLexemes(client, query);
      let expected: Array<[string, number]> = [];
      if (lexemes.length > 0) {
        const { terms, anyTerm } = matchTerms(lexemes);
        const coverage = terms.map((_, i) => `(search @@ $${i + 3}::tsquery)::int`).join(' + ');
        const rows = await client.unsafe(
          `select id, (${coverage} + ts_rank(search, $2::tsquery, 33)) as score from "${schema}".details
           where user_id = $1 and search @@ $2::tsquery order by score desc, seq asc`,
          ['u1', anyTerm, ...terms],
        );
        expected = rows.map((r) => [r.id as string, Number(r.score)]);
      }
      const before = statements();
      const hits = await store.search(scope, { query, limit: 20 });
      expect(statements() - before, query).toBe(1);
      expect(
        hits.map((h) => [h.detail.id, h.score]),
        query,
      ).toEqual(expected);
    }
    // The queries did find what they name.
    const found = await store.search(scope, { query: "O'Reilly", limit: 5 });
    expect(found[0]?.detail.id).toBe(ids[0]);
    // Sanity: the comparison above is not empty everywhere.
    expect((await store.search(scope, { query: 'deploy', limit: 20 })).length).toBe(4);
  });

  it('runs as a statement prepared once per connection (no parse and describe round trip per call)', async () => {
    const client = postgres(pgUrl, { max: 1, onnotice: () => {} });
    cleanup.push(() => client.end({ timeout: 5 }));
    const schema = freshSchema();
    cleanup.push(() => dropSchema(schema));
    const store = new PostgresDetailStore({ client, schema });
    await store.setup();
    const scope = { userId: 'u1' };
    await store.create(scope, { description: 'deploy notes', content: TEXTS[2]! });
    for (const query of ['deploy', 'error retry', 'deploy']) await store.search(scope, { query, limit: 5 });
    // One connection: the statements it holds prepared are this client's.
    const prepared = await client<{ statement: string }[]>`select statement from pg_prepared_statements`;
    const searches = prepared.filter(
      (p) => p.statement.includes(`"${schema}"."details"`) && /ts_rank/.test(p.statement),
    );
    expect(searches).toHaveLength(1);
  });
});
