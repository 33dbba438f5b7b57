import { forgetFact, forgetUser, verifyErased } from '@kioku/core/passes';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresStores } from '../src/index.js';
import { dropSchema, freshSchema, noServer, pgUrl, sharedClient } from './helpers.js';

/*
 * Forgetting leaves no word of hers anywhere in the schema: not in the tables Kioku reads back (the
 * snapshots) and not in what the triggers derive from them (`fact_terms`, `fact_counts`), which a raw scan
 * of every table reads directly.
 */

const WORD = 'leukemiaxq';
const ALICE = { userId: 'alice-residue' };
const BOB = { userId: 'bob-residue' };

/** Rows of every table in the schema whose text (any column) holds `needle` or names the user. */
async function rawHits(schema: string, needle: string, userId: string): Promise<string[]> {
  const sql = sharedClient();
  const tables = await sql<{ table_name: string }[]>`
    select table_name from information_schema.tables
    where table_schema = ${schema} and table_type = 'BASE TABLE' and table_name <> '__kioku_migrations'`;
  const hits: string[] = [];
  for (const { table_name: table } of tables) {
    const rows = await sql.unsafe(
      `select t::text as row from "${schema}"."${table}" as t where t::text ilike $1 or t::text ilike $2`,
      [`%${needle}%`, `%${userId}%`],
    );
    for (const r of rows) hits.push(`${table}: ${(r as unknown as { row: string }).row}`);
  }
  return hits;
}

describe.skipIf(noServer)('PostgreSQL: erasure leaves no residue', () => {
  const schemas: string[] = [];
  afterAll(async () => {
    for (const schema of schemas) await dropSchema(schema);
  });

  async function open() {
    const schema = freshSchema();
    schemas.push(schema);
    const stores = createPostgresStores({ client: sharedClient(), schema });
    await stores.setup();
    return { schema, stores };
  }

  it('forgetUser: no row of hers is left in any table (fact_terms, fact_counts included)', async () => {
    const { schema, stores } = await open();
    await stores.facts.create(ALICE, { content: `Her daughter Mia was diagnosed with ${WORD} in Porto` });
    await stores.facts.create({ ...ALICE, agentId: 'coder' }, { content: `Mia ${WORD} treatment` });
    await stores.facts.create(BOB, { content: 'Bob likes tea' });
    expect(await rawHits(schema, WORD, ALICE.userId)).not.toEqual([]);

    const receipt = await forgetUser(stores, ALICE.userId);
    expect(receipt.total).toBe(2);
    expect(await rawHits(schema, WORD, ALICE.userId)).toEqual([]);
    expect(await verifyErased(stores, ALICE.userId)).toEqual({ erased: true });
    // Bob's statistics are untouched: his search still works.
    expect((await stores.facts.search(BOB, { query: 'tea' })).map((h) => h.fact.content)).toEqual([
      'Bob likes tea',
    ]);
  });

  it('forgetFact: the fact’s words leave fact_terms too', async () => {
    const { schema, stores } = await open();
    const fact = await stores.facts.create(ALICE, { content: `The ${WORD} diagnosis` });
    await stores.facts.create(ALICE, { content: 'Likes green tea' });
    await forgetFact(stores, ALICE, fact.id);
    expect(await rawHits(schema, WORD, 'no-such-user')).toEqual([]);
  });

  it('verifyErased reads the derived tables: a leftover statistics row is reported, and forgetUser removes it', async () => {
    const { schema, stores } = await open();
    // What a schema erased before this fix still holds: zero-count rows with her words.
    await sharedClient().unsafe(
      `insert into "${schema}".fact_terms (user_id, agent_id, term, df) values ($1, '', $2, 0);
       insert into "${schema}".fact_counts (user_id, agent_id, n, terms) values ($1, '', 0, 0)`
        .replaceAll('$1', `'${ALICE.userId}'`)
        .replaceAll('$2', `'${WORD}'`),
    );
    const check = await verifyErased(stores, ALICE.userId);
    expect(check.erased).toBe(false);
    expect(check.erased ? [] : check.left).toEqual([
      expect.objectContaining({ kind: 'facts', place: 'fact_terms', count: 1 }),
      expect.objectContaining({ kind: 'facts', place: 'fact_counts', count: 1 }),
    ]);
    await forgetUser(stores, ALICE.userId);
    expect(await rawHits(schema, WORD, ALICE.userId)).toEqual([]);
    expect(await verifyErased(stores, ALICE.userId)).toEqual({ erased: true });
  });
});
void pgUrl;
