import type { Fact } from '@kioku/core';
import { newestUpdatedFirst } from '@kioku/core/adapter';
import { ManualClock } from '@kioku/core/testing';
import { expectKiokuError } from '@kioku/store-test-suite';
import { PgDialect } from 'drizzle-orm/pg-core';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres, { type Sql } from 'postgres';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  MIGRATIONS_TABLE,
  PostgresFactStore,
  PostgresPlanStore,
  PostgresSessionStore,
  PostgresWorkingMemoryStore,
} from '../src/index.js';
import { bundledMigrations, migrationsIn } from '../src/migrations.js';
import { dropSchema, endSharedClient, freshSchema, noServer, pgUrl, sharedClient } from './helpers.js';

const T0 = Date.parse('2025-01-01T00:00:00.000Z');

/** A fact record for restore(): created at T0 + `created` s, updated at T0 + `updated` s. */
function record(userId: string, id: string, created: number, updated = created): Fact {
  return {
    id,
    userId,
    content: `fact ${id}`,
    category: 'misc',
    tags: [],
    metadata: {},
    provenance: { source: 'import' },
    createdAt: new Date(T0 + created * 1000).toISOString(),
    updatedAt: new Date(T0 + updated * 1000).toISOString(),
    version: 1,
  };
}

function snapshot(records: Fact[]) {
  return {
    format: 'kioku.snapshot',
    schemaVersion: 1,
    kind: 'facts',
    createdAt: new Date(T0).toISOString(),
    selector: { allUsers: true },
    records,
  };
}

/** A fact row written with plain SQL, as a host app or a script might. */
function rawInsert(sql: Sql, schema: string, userId: string, id: string, at: string) {
  return sql.unsafe(
    `insert into "${schema}".facts (user_id, id, content, category, tags, tag_keys, metadata, provenance, created_at, updated_at)
     values ($1, $2, 'raw', 'misc', '[]', '{}', '{}', '{"source":"import"}', $3, $3)`,
    [userId, id, at],
  );
}

/** Every plan node of an `explain (format json)` result. */
function planNodes(plan: unknown): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  const walk = (node: Record<string, unknown>) => {
    out.push(node);
    for (const child of (node.Plans as Array<Record<string, unknown>> | undefined) ?? []) walk(child);
  };
  walk((plan as Array<{ Plan: Record<string, unknown> }>)[0]!.Plan);
  return out;
}

describe.skipIf(noServer)('fact count and the updated order', () => {
  const sql = () => sharedClient();
  const cleanup: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
  });
  afterAll(endSharedClient);

  async function factStore(options: { client?: Sql; clock?: ManualClock } = {}) {
    const schema = freshSchema();
    const store = new PostgresFactStore({ client: options.client ?? sql(), schema, clock: options.clock });
    cleanup.push(() => dropSchema(schema));
    await store.setup();
    return { store, schema };
  }

  /** `fact_counts` (side channel) equals count(*) per partition, and so does `count()` of each. */
  async function expectExactCounts(store: PostgresFactStore, schema: string) {
    const actual = await sql().unsafe(
      `select user_id, agent_id, count(*)::int as n from "${schema}".facts group by 1, 2 order by 1, 2`,
    );
    const kept = await sql().unsafe(
      `select user_id, agent_id, n::int as n from "${schema}".fact_counts where n <> 0 order by 1, 2`,
    );
    expect(kept).toEqual(actual);
    for (const row of actual) {
      const scope = { userId: row.user_id, ...(row.agent_id ? { agentId: row.agent_id } : {}) };
      expect(await store.count(scope)).toBe(row.n);
    }
    return actual.map((r) => `${r.user_id}/${r.agent_id}:${r.n}`);
  }

  it('count() reads fact_counts, which triggers keep exact whatever writes the facts table', async () => {
    const clock = new ManualClock(T0);
    const { store, schema } = await factStore({ clock });
    const u1 = { userId: 'u1' };
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await store.create(u1, { content: `fact ${i}` }));
    await store.create({ userId: 'u1', agentId: 'a' }, { content: 'agent fact' });
    await store.create({ userId: 'u2' }, { content: 'other user' });
    await expect(store.create(u1, { id: made[0]!.id, content: 'dup' })).rejects.toThrow();
    await store.delete(u1, made[1]!.id);
    expect(await expectExactCounts(store, schema)).toEqual(['u1/:2', 'u1/a:1', 'u2/:1']);

    await store.restore(snapshot([record('u2', 'x', 0), record('u2', 'y', 1), record('u3', 'z', 2)]));
    expect(await expectExactCounts(store, schema)).toEqual(['u1/:2', 'u1/a:1', 'u2/:2', 'u3/:1']);

    await rawInsert(sql(), schema, 'u4', 'r1', new Date(T0).toISOString());
    await sql().unsafe(`delete from "${schema}".facts where user_id = 'u3'`);
    await sql().unsafe(`update "${schema}".facts set agent_id = 'b' where user_id = 'u2' and id = 'x'`);
    await sql().unsafe(`update "${schema}".facts set content = 'edited' where user_id = 'u1'`);
    expect(await expectExactCounts(store, schema)).toEqual(['u1/:2', 'u1/a:1', 'u2/:1', 'u2/b:1', 'u4/:1']);
    expect(await store.count({ userId: 'u3' })).toBe(0);

    await sql().unsafe(`truncate "${schema}".facts`);
    expect(await expectExactCounts(store, schema)).toEqual([]);
    expect(await store.count(u1)).toBe(0);
  });

  it('concurrent creates in one partition from two clients are all counted', async () => {
    const { store, schema } = await factStore();
    const other = new PostgresFactStore({
      url: pgUrl,
      schema,
      clientOptions: { max: 4, onnotice: () => {} },
    });
    try {
      const scope = { userId: 'busy' };
      await Promise.all(
        Array.from({ length: 80 }, (_, i) => (i % 2 ? store : other).create(scope, { content: `fact ${i}` })),
      );
      expect(await expectExactCounts(store, schema)).toEqual(['busy/:80']);
    } finally {
      await other.close();
    }
  });

  it('setup() upgrades a schema from the first migration: existing facts counted, index rebuilt, versions 1', async () => {
    const schema = freshSchema();
    cleanup.push(() => dropSchema(schema));
    const [first] = bundledMigrations();
    await new PgDialect().migrate(
      migrationsIn(schema, [first!]),
      drizzle(sql())._.session as unknown as Parameters<PgDialect['migrate']>[1],
      { migrationsFolder: '', migrationsTable: MIGRATIONS_TABLE, migrationsSchema: schema },
    );
    const store = new PostgresFactStore({ client: sql(), schema });
    await expect(store.count({ userId: 'u1' })).rejects.toThrow(/setup\(\)/);
    for (let i = 0; i < 5; i++) await rawInsert(sql(), schema, 'u1', `f${i}`, new Date(T0 + i).toISOString());
    await rawInsert(sql(), schema, 'u2', 'g', new Date(T0).toISOString());
    await sql().unsafe(
      `insert into "${schema}".plans (user_id, thread_id, id, goal, steps, context_notes, is_complete, created_at, updated_at)
       values ('u1', 't1', 'plan-old', 'g', '[]', '[]', false, $1, $1)`,
      [new Date(T0).toISOString()],
    );
    await sql().unsafe(
      `insert into "${schema}".working_entries (user_id, key, value, tags, tag_keys, stored_at, expires_at)
       values ('u1', 'session/s1/note', 'old note', '[]', '{}', $1, $2)`,
      [new Date().toISOString(), new Date(Date.now() + 60 * 60_000).toISOString()],
    );
    const sessionId = '01890000-0000-7000-8000-000000000001';
    await sql().unsafe(
      `insert into "${schema}".sessions (user_id, id, store_types, metadata, created_at)
       values ('u1', $1, '["basic_session"]', '{}', $2)`,
      [sessionId, new Date(T0).toISOString()],
    );
    await sql().unsafe(
      `insert into "${schema}".session_kv (user_id, session_id, key, value, ts, ord)
       values ('u1', $1, 'city', 'Lisbon', $2, 1)`,
      [sessionId, new Date(T0).toISOString()],
    );

    await store.setup();
    expect(await expectExactCounts(store, schema)).toEqual(['u1/:5', 'u2/:1']);
    const [index] =
      await sql()`select indexdef from pg_indexes where schemaname = ${schema} and indexname = 'facts_updated_idx'`;
    expect(index?.indexdef).toContain('updated_at DESC, created_at DESC, id COLLATE "C"');
    expect((await store.list({ userId: 'u1' }, { order: 'updated' })).map((f) => f.id)).toEqual([
      'f4',
      'f3',
      'f2',
      'f1',
      'f0',
    ]);
    // Rows from before versions existed read as version 1 and count on from there.
    expect((await store.get({ userId: 'u1' }, 'f0'))?.version).toBe(1);
    expect(
      (await store.update({ userId: 'u1' }, 'f0', { content: 'x' }, { expectedVersion: 1 })).version,
    ).toBe(2);
    const plans = new PostgresPlanStore({ client: sql(), schema });
    expect((await plans.get({ userId: 'u1', threadId: 't1' }))?.version).toBe(1);
    expect(
      (await plans.addContextNote({ userId: 'u1', threadId: 't1' }, 'n', { expectedVersion: 1 })).version,
    ).toBe(2);
    const working = new PostgresWorkingMemoryStore({ client: sql(), schema });
    expect(await working.get({ userId: 'u1' }, 'session/s1/note')).toMatchObject({ version: 1 });
    expect(
      (await working.set({ userId: 'u1' }, 'session/s1/note', 'new', { expectedVersion: 1 })).version,
    ).toBe(2);
    const sessions = new PostgresSessionStore({ client: sql(), schema });
    expect(await sessions.kvGet({ userId: 'u1' }, sessionId, 'city')).toMatchObject({
      value: 'Lisbon',
      version: 1,
    });
    expect(
      (await sessions.kvSet({ userId: 'u1' }, sessionId, 'city', 'Porto', { expectedVersion: 1 })).version,
    ).toBe(2);
  });

  it('the updated page is read from facts_updated_idx in order, never sorted, in custom and generic plans', async () => {
    const seen: Array<{ query: string; params: unknown[] }> = [];
    const client = postgres(pgUrl, {
      max: 1,
      onnotice: () => {},
      debug: (_connection, query, params) => seen.push({ query, params: params as unknown[] }),
    });
    cleanup.push(() => client.end({ timeout: 5 }));
    const { store, schema } = await factStore({ client });
    const records = [];
    for (let i = 0; i < 3000; i++)
      records.push(record('big', `f${i}`, Math.floor(i / 4), i % 7 ? i : 5000 + i));
    for (let i = 0; i < 300; i++) records.push(record('small', `s${i}`, i));
    await store.restore(snapshot(records));
    await sql().unsafe(`analyze "${schema}".facts`);

    seen.length = 0;
    const page = await store.list({ userId: 'big' }, { order: 'updated', limit: 128, offset: 128 });
    const expected = records.filter((r) => r.userId === 'big').sort(newestUpdatedFirst);
    expect(page.map((f) => f.id)).toEqual(expected.slice(128, 256).map((f) => f.id));
    const statement = seen.find((s) => s.query.includes('order by'));
    expect(statement).toBeDefined();
    const { query, params } = statement!;

    const check = (plan: unknown) => {
      const nodes = planNodes(plan);
      expect(nodes.map((n) => n['Node Type'])).not.toContain('Sort');
      expect(nodes.map((n) => n['Node Type'])).not.toContain('Incremental Sort');
      expect(nodes.find((n) => n['Node Type'] === 'Index Scan')?.['Index Name']).toBe('facts_updated_idx');
    };
    const [custom] = await sql().unsafe(`explain (format json) ${query}`, params as never[]);
    check(custom?.['QUERY PLAN']);
    const literal = (v: unknown) =>
      typeof v === 'number' ? String(v) : `'${String(v).replaceAll("'", "''")}'`;
    const generic = await sql().begin(async (tx) => {
      await tx.unsafe('set local plan_cache_mode = force_generic_plan');
      await tx.unsafe(`prepare kioku_page_test as ${query}`);
      const [row] = await tx.unsafe(
        `explain (format json) execute kioku_page_test(${params.map(literal).join(', ')})`,
      );
      await tx.unsafe('deallocate kioku_page_test');
      return row?.['QUERY PLAN'];
    });
    check(generic);
  });

  it('ids break ties byte-wise even where the database collation orders them otherwise', async (ctx) => {
    const [icu] = await sql()`select 1 from pg_collation where collname = 'en-x-icu'`;
    if (!icu) ctx.skip();
    const name = `${new URL(pgUrl).pathname.slice(1)}_icu`;
    await sql().unsafe(`create database "${name}" template template0 locale_provider icu icu_locale 'en-US'`);
    const url = new URL(pgUrl);
    url.pathname = `/${name}`;
    const client = postgres(url.toString(), { max: 2, onnotice: () => {} });
    cleanup.push(async () => {
      await client.end({ timeout: 5 });
      await sql().unsafe(`drop database if exists "${name}" with (force)`);
    });
    const ids = ['tie-b', 'tie-a', 'tie-B', 'tie_0', 'tie-0', 'Tie-a'];
    const [collated] = await client`select array_agg(x order by x) as ids from unnest(${ids}::text[]) as x`;
    const codeUnits = [...ids].sort();
    expect(collated?.ids).not.toEqual(codeUnits);

    const store = new PostgresFactStore({ client, schema: 'k', clock: new ManualClock(T0) });
    await store.setup();
    const scope = { userId: 'u' };
    for (const id of ids) await store.create(scope, { id, content: id });
    expect((await store.list(scope, { order: 'updated' })).map((f) => f.id)).toEqual(codeUnits);
    expect((await store.list(scope, { order: 'updated', limit: 2, offset: 2 })).map((f) => f.id)).toEqual(
      codeUnits.slice(2, 4),
    );
  });

  it('update and delete are one statement each; only a write refused at another version reads the version', async () => {
    const seen: string[] = [];
    const client = postgres(pgUrl, {
      max: 1,
      onnotice: () => {},
      debug: (_connection, query) => seen.push(query),
    });
    cleanup.push(() => client.end({ timeout: 5 }));
    const { store } = await factStore({ client });
    const scope = { userId: 'u' };
    // Restore keeps the snapshot's versions.
    await store.restore(snapshot([{ ...record('u', 'a', 0), version: 7 }, record('u', 'b', 1)]));
    expect((await store.get(scope, 'a'))?.version).toBe(7);
    const writes = async (write: () => Promise<unknown>) => {
      seen.length = 0;
      await write().catch(() => {});
      return seen.map((q) => q.trim().split(/\s/)[0]!.toLowerCase());
    };
    // A changed text is analysed again: its search terms are set in the same transaction.
    const analysed = ['begin', 'update', 'update', 'commit'];
    expect(await writes(() => store.update(scope, 'a', { content: 'x' }))).toEqual(analysed);
    expect(await writes(() => store.update(scope, 'a', { content: 'y' }, { expectedVersion: 8 }))).toEqual(
      analysed,
    );
    expect(await writes(() => store.update(scope, 'a', { metadata: { k: 1 } }))).toEqual(['update']);
    expect(await writes(() => store.update(scope, 'nope', { content: 'y' }))).toEqual([
      'begin',
      'update',
      'commit',
    ]);
    expect(await writes(() => store.update(scope, 'a', { content: 'z' }, { expectedVersion: 8 }))).toEqual([
      'begin',
      'update',
      'commit',
      'select',
    ]);
    await expectKiokuError(store.update(scope, 'a', { content: 'z' }, { expectedVersion: 8 }), 'CONFLICT');
    await expectKiokuError(
      store.update(scope, 'nope', { content: 'z' }, { expectedVersion: 8 }),
      'NOT_FOUND',
    );
    expect(await store.get(scope, 'a')).toMatchObject({ content: 'y', version: 10 });
    expect(await writes(() => store.delete(scope, 'b', { expectedVersion: 1 }))).toEqual(['delete']);
    expect(await writes(() => store.delete(scope, 'a'))).toEqual(['delete']);
    expect(await store.delete(scope, 'a', { expectedVersion: 10 })).toBe(false);
    // Versions are 32-bit on every backend: a larger expected version, or a snapshot holding one, is VALIDATION.
    await store.create(scope, { id: 'c', content: 'c' });
    await expectKiokuError(
      store.update(scope, 'c', { content: 'x' }, { expectedVersion: 2 ** 40 }),
      'VALIDATION',
    );
    await expectKiokuError(store.delete(scope, 'c', { expectedVersion: 2 ** 40 }), 'VALIDATION');
    await expectKiokuError(
      store.restore(snapshot([{ ...record('u', 'd', 0), version: 2 ** 40 }])),
      'VALIDATION',
    );
    expect((await store.list(scope)).map((f) => `${f.id}@${f.version}`)).toEqual(['c@1']);
  });

  it('the page, count and searches are prepared once per connection, never with prepare: false', async () => {
    const statements = async (client: Sql) =>
      (await client`select statement from pg_prepared_statements`).map((r) => String(r.statement));
    for (const prepare of [true, false]) {
      const client = postgres(pgUrl, { max: 1, prepare, onnotice: () => {} });
      cleanup.push(() => client.end({ timeout: 5 }));
      const { store } = await factStore({ client });
      const scope = { userId: 'u' };
      await store.create(scope, { content: 'one' });
      for (let i = 0; i < 3; i++) {
        expect(await store.list(scope, { order: 'updated', limit: 128, offset: 0 })).toHaveLength(1);
        expect(await store.count(scope)).toBe(1);
        // Search: its statistics, a small partition's rows, candidates with a category filter, and the
        // winners' rows, each prepared once.
        expect(await store.search(scope, { query: ['one', 'ONE', 'ones'][i] })).toHaveLength(1);
        expect(await store.search(scope, { query: 'one two', category: 'elsewhere' })).toHaveLength(0);
      }
      const named = await statements(client);
      if (!prepare) expect(named).toEqual([]);
      else {
        expect(named.filter((s) => s.includes('collate "C"') && s.includes('limit'))).toHaveLength(1);
        const countOnly = named.filter((s) => s.includes('"fact_counts"') && !s.includes('search_terms'));
        expect(countOnly.filter((s) => !s.includes('"fact_terms"'))).toHaveLength(1);
        expect(named.filter((s) => s.includes('"fact_terms"'))).toHaveLength(1);
        // A one-fact partition is ranked from this process's index after one statement (its revision, and
        // its terms when they changed); the filtered search finds candidates with statistics.
        expect(named.filter((s) => s.includes('search_terms') && s.includes('<= 20000'))).toHaveLength(1);
        expect(named.filter((s) => s.includes('string_to_array'))).toHaveLength(1);
        expect(named.filter((s) => s.includes('any($3::text[])') && s.includes('"id"'))).toHaveLength(1);
      }
    }
  });
});
