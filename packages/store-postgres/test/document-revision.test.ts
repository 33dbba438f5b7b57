import postgres, { type Sql } from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresDocumentStore } from '../src/index.js';
import {
  dropSchema,
  endSharedClient,
  freshSchema,
  noServer,
  pgUrl,
  schemaBefore,
  sharedClient,
} from './helpers.js';

/*
 * `revision` is what core's knowledge block is reused by without reading the documents: it must change with
 * every write to the partition that any client can see, including writes Kioku did not make, and after
 * `eraseUser` leave nothing of the user behind. (The conformance suite checks Kioku's own writes.)
 */

const AT = '2025-01-01T00:00:00.000Z';

/** A document row written with plain SQL, as a host app or a script might (no chunks: none are needed). */
function rawInsert(sql: Sql, schema: string, userId: string, id: string) {
  return sql.unsafe(
    `insert into "${schema}".documents (user_id, id, title, tags, tag_keys, source, text, token_count, metadata, added_at)
     values ($1, $2, 'Raw', '[]', '{}', '{"kind":"text"}', 'raw text', 2, '{}', $3)`,
    [userId, id, AT],
  );
}

describe.skipIf(noServer)('PostgreSQL document revision', () => {
  const schemas: string[] = [];
  const clients: Sql[] = [];
  afterAll(async () => {
    for (const client of clients) await client.end({ timeout: 5 });
    for (const schema of schemas) await dropSchema(schema);
    await endSharedClient();
  });

  async function open() {
    const schema = freshSchema();
    schemas.push(schema);
    const store = new PostgresDocumentStore({ client: sharedClient(), schema });
    await store.setup();
    return { schema, store };
  }

  it('setup() on a schema made by the previous migrations gives every existing partition a revision', async () => {
    const schema = await schemaBefore('document_revisions');
    schemas.push(schema);
    await rawInsert(sharedClient(), schema, 'u1', 'a');
    await rawInsert(sharedClient(), schema, 'u2', 'b');
    const store = new PostgresDocumentStore({ client: sharedClient(), schema });
    await store.setup();

    const u1 = await store.revision({ userId: 'u1' });
    const u2 = await store.revision({ userId: 'u2' });
    expect(u1).toMatch(/^\d+$/);
    expect(u2).toMatch(/^\d+$/);
    expect(u1).not.toBe(u2);
    await store.eraseUser('u1');
    expect(await store.revision({ userId: 'u1' })).not.toBe(u1);
    expect(await store.revision({ userId: 'u2' })).toBe(u2);
  });

  it('changes on writes Kioku did not make (raw SQL from another client, a truncate), not on a refused one', async () => {
    const { schema, store } = await open();
    const scope = { userId: 'u1' };
    const seen = new Set([await store.revision(scope)]);
    const expectNew = async () => {
      const revision = await store.revision(scope);
      expect(seen.has(revision), `revision ${revision} came back`).toBe(false);
      seen.add(revision);
    };
    const host = postgres(pgUrl, { max: 1, onnotice: () => {} });
    clients.push(host);
    await rawInsert(host, schema, 'u1', 'raw-1');
    await expectNew();
    await host.unsafe(
      `update "${schema}".documents set metadata = '{"trust":"confirmed"}' where user_id = 'u1'`,
    );
    await expectNew();
    const before = await store.revision(scope);
    await expect(store.create(scope, { id: 'raw-1', title: 'Again', text: 'again' })).rejects.toThrow();
    expect(await store.revision(scope)).toBe(before);
    await host.unsafe(`truncate "${schema}".documents cascade`);
    expect(await store.list(scope)).toEqual([]);
    await expectNew();
  });

  it('eraseUser removes her revision rows (every agent); what is left is reported as residue', async () => {
    const { schema, store } = await open();
    const alice = { userId: 'alice' };
    await store.create(alice, { title: 'Tea', text: 'Ann drinks tea.' });
    await store.create({ userId: 'alice', agentId: 'coach' }, { title: 'Run', text: 'Ann runs.' });
    await store.create({ userId: 'bob' }, { title: 'Cello', text: 'Bo plays the cello.' });
    const bob = await store.revision({ userId: 'bob' });
    expect(await store.erasureResidue('alice')).toEqual([{ place: 'document_revisions', count: 2 }]);
    await store.eraseUser('alice');
    expect(await store.erasureResidue('alice')).toEqual([{ place: 'document_revisions', count: 0 }]);
    const rows = await sharedClient().unsafe(
      `select user_id from "${schema}".document_revisions order by user_id`,
    );
    expect(rows.map((r) => r.user_id)).toEqual(['bob']);
    expect(await store.revision({ userId: 'bob' })).toBe(bob);
  });
});
