import type { Fact } from '@kioku/core';
import postgres, { type Sql } from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresFactStore } from '../src/index.js';
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
 * `revision` is what core's fact block is reused by: it must change with every write to the partition that
 * any client can see, including writes Kioku did not make (a host app's SQL, a restore), and after
 * `eraseUser` leave nothing of the user behind.
 */

const AT = '2025-01-01T00:00:00.000Z';

/** A fact row written with plain SQL, as a host app or a script might. */
function rawInsert(sql: Sql, schema: string, userId: string, id: string) {
  return sql.unsafe(
    `insert into "${schema}".facts (user_id, id, content, category, tags, tag_keys, metadata, provenance, created_at, updated_at)
     values ($1, $2, 'raw', 'misc', '[]', '{}', '{}', '{"source":"import"}', $3, $3)`,
    [userId, id, AT],
  );
}

describe.skipIf(noServer)('PostgreSQL fact revision', () => {
  const schemas: string[] = [];
  const clients: Sql[] = [];
  afterAll(async () => {
    for (const client of clients) await client.end({ timeout: 5 });
    for (const schema of schemas) await dropSchema(schema);
    await endSharedClient();
  });

  async function open(schema = freshSchema()) {
    schemas.push(schema);
    const store = new PostgresFactStore({ client: sharedClient(), schema });
    await store.setup();
    return { schema, store };
  }

  /** A second store on the same schema with its own connection, as another process would have. */
  function twinOf(schema: string) {
    const client = postgres(pgUrl, { max: 4, onnotice: () => {} });
    clients.push(client);
    return new PostgresFactStore({ client, schema });
  }

  it('setup() on a schema made by the previous migrations gives every existing partition a revision', async () => {
    const schema = await schemaBefore('fact_revisions');
    schemas.push(schema);
    await rawInsert(sharedClient(), schema, 'u1', 'a');
    await rawInsert(sharedClient(), schema, 'u2', 'b');
    const store = new PostgresFactStore({ client: sharedClient(), schema });
    await store.setup();

    const u1 = await store.revision({ userId: 'u1' });
    const u2 = await store.revision({ userId: 'u2' });
    expect(u1).toMatch(/^\d+$/);
    expect(u2).toMatch(/^\d+$/);
    expect(u1).not.toBe(u2);
    // Erasing a partition that was never written since the upgrade still changes its revision.
    await store.eraseUser('u1');
    expect(await store.revision({ userId: 'u1' })).not.toBe(u1);
    expect(await store.revision({ userId: 'u2' })).toBe(u2);
  });

  it('changes on writes Kioku did not make: raw SQL from another client, a restore, a truncate', async () => {
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
    await host.unsafe(`update "${schema}".facts set metadata = '{"x":1}' where user_id = 'u1'`);
    await expectNew();
    const fact: Fact = {
      id: 'restored',
      userId: 'u1',
      content: 'Restored fact',
      category: 'general',
      tags: [],
      metadata: {},
      provenance: { source: 'import' },
      createdAt: AT,
      updatedAt: AT,
      version: 1,
    };
    await store.restore({
      format: 'kioku.snapshot',
      schemaVersion: 1,
      kind: 'facts',
      createdAt: AT,
      selector: { allUsers: true },
      records: [fact],
    });
    await expectNew();
    await host.unsafe(`truncate "${schema}".facts`);
    expect(await store.count(scope)).toBe(0);
    await expectNew();
  });

  it('a refused write leaves it unchanged', async () => {
    const { store } = await open();
    const scope = { userId: 'u1' };
    const fact = await store.create(scope, { content: 'Ann drinks tea' });
    const before = await store.revision(scope);
    await expect(store.update(scope, fact.id, { content: 'x' }, { expectedVersion: 7 })).rejects.toThrow();
    await expect(store.create(scope, { id: fact.id, content: 'again' })).rejects.toThrow();
    expect(await store.delete(scope, 'no-such-fact')).toBe(false);
    expect(await store.revision(scope)).toBe(before);
  });

  it('eraseUser removes her revision rows (every agent), and her revisions after it are values never seen', async () => {
    const { store } = await open();
    const alice = { userId: 'alice' };
    const coder = { userId: 'alice', agentId: 'coder' };
    // Each partition's revisions so far (two partitions may read the same value; one never twice).
    const seen = new Map([alice, coder].map((scope) => [scope, new Set<string>()]));
    const expectNew = async () => {
      for (const [scope, values] of seen) {
        const revision = await store.revision(scope);
        expect(values.has(revision), `revision ${revision} came back`).toBe(false);
        values.add(revision);
      }
    };
    await expectNew();
    for (const scope of [alice, coder]) await store.create(scope, { content: 'Ann drinks tea' });
    await expectNew();
    await store.create({ userId: 'bob' }, { content: 'Bob plays cello' });
    const bob = await store.revision({ userId: 'bob' });

    await store.eraseUser('alice');
    expect(await store.erasureResidue('alice')).toEqual([
      { place: 'fact_terms', count: 0 },
      { place: 'fact_counts', count: 0 },
      { place: 'fact_revisions', count: 0 },
    ]);
    await expectNew();
    expect(await store.revision({ userId: 'bob' })).toBe(bob);
    await store.create(alice, { content: 'Ann drinks coffee' });
    await expectNew();
  });

  it('writers of one partition on two clients (creates, text edits, metadata edits, deletes) never deadlock', async () => {
    const { schema, store } = await open();
    const twin = twinOf(schema);
    const scope = { userId: 'u1' };
    const facts = await Promise.all(
      Array.from({ length: 8 }, (_, i) => store.create(scope, { content: `fact ${i} about tea` })),
    );
    const doomed = await Promise.all(
      Array.from({ length: 8 }, (_, i) => store.create(scope, { content: `doomed ${i} about tea` })),
    );
    const start = await store.revision(scope);
    await Promise.all(
      [store, twin].flatMap((s, k) =>
        facts.flatMap((f, i) => [
          s.update(scope, f.id, { content: `edited ${i} by ${k} about coffee` }),
          s.update(scope, f.id, { metadata: { by: k } }),
          s.create(scope, { content: `new ${i} by ${k}` }),
          s.delete(scope, doomed[i]!.id),
        ]),
      ),
    );
    expect(await store.count(scope)).toBe(8 + 16);
    expect(await store.revision(scope)).not.toBe(start);
    expect(await twin.revision(scope)).toBe(await store.revision(scope));
  });
});
