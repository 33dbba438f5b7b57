import type { Scope } from '@kioku/core';
import { InMemoryFactStore } from '@kioku/core/store';
import postgres, { type Sql } from 'postgres';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { VACUUM_AFTER_ROWS } from '../src/fact-search.js';
import { PostgresFactStore } from '../src/index.js';
import {
  countingClient,
  dropSchema,
  endSharedClient,
  freshSchema,
  noServer,
  pgUrl,
  schemaBefore,
  sharedClient,
} from './helpers.js';

const sql = sharedClient;

/**
 * The statistics the triggers keep (side channel) equal those counted from the rows: per partition the
 * number of facts and the sum of their lengths, and per partition and term the facts holding it.
 */
async function expectExactStats(schema: string): Promise<void> {
  const counted = await sql().unsafe(
    `select f.user_id, f.agent_id, k.term, count(*)::int as df
     from "${schema}".facts f cross join lateral (select distinct unnest(string_to_array(f.search_terms, ' ')) as term) k
     group by 1, 2, 3 order by 1, 2, 3`,
  );
  const kept = await sql().unsafe(
    `select user_id, agent_id, term, df::int as df from "${schema}".fact_terms where df <> 0 order by 1, 2, 3`,
  );
  expect(kept).toEqual(counted);
  const lengths = await sql().unsafe(
    `select user_id, agent_id, count(*)::int as n, sum(search_length)::int as terms from "${schema}".facts
     group by 1, 2 order by 1, 2`,
  );
  const totals = await sql().unsafe(
    `select user_id, agent_id, n::int as n, terms::int as terms from "${schema}".fact_counts where n <> 0 order by 1, 2`,
  );
  expect(totals).toEqual(lengths);
}

const ranked = async (store: { search: PostgresFactStore['search'] }, scope: Scope, query: string) =>
  (await store.search(scope, { query, limit: 20 })).map((h) => [h.fact.id, h.score]);

describe.skipIf(noServer)('search ranking and its statistics', () => {
  const cleanup: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
  });
  afterAll(endSharedClient);

  async function factStore(client: Sql = sql(), schema = freshSchema()) {
    const store = new PostgresFactStore({ client, schema });
    cleanup.push(() => dropSchema(schema));
    await store.setup();
    return { store, schema };
  }

  it('a rare term outranks a common one (idf), with core’s ids and scores', async () => {
    const { store, schema } = await factStore();
    const core = new InMemoryFactStore();
    const scope = { userId: 'u1' };
    const facts = [
      'User drinks coffee every morning',
      'User buys coffee beans online',
      'Coffee makes the user jittery',
      'User met a friend for coffee',
      'User drinks green tea',
    ];
    for (const [i, content] of facts.entries()) {
      await store.create(scope, { id: `f${i}`, content });
      await core.create(scope, { id: `f${i}`, content });
    }
    const hits = await ranked(store, scope, 'coffee or tea?');
    expect(hits[0]?.[0]).toBe('f4');
    expect(hits).toEqual(await ranked(core, scope, 'coffee or tea?'));
    await expectExactStats(schema);
  });

  it('updates and deletes adjust the statistics', async () => {
    const { store, schema } = await factStore();
    const scope = { userId: 'u1', agentId: 'a1' };
    await store.create(scope, { id: 'a', content: 'Lisbon trip in May', tags: ['travel'] });
    await store.create(scope, { id: 'b', content: 'Porto trip in June' });
    const df = async (term: string) =>
      Number(
        (
          await sql().unsafe(
            `select df from "${schema}".fact_terms where user_id = 'u1' and agent_id = 'a1' and term = $1`,
            [term],
          )
        )[0]?.df ?? 0,
      );
    expect(await df('trip')).toBe(2);
    await store.update(scope, 'a', { content: 'Lisbon holiday in May' });
    expect([await df('trip'), await df('holidai')]).toEqual([1, 1]);
    await store.update(scope, 'a', { tags: [] });
    expect(await df('travel')).toBe(0);
    await store.delete(scope, 'b');
    expect([await df('trip'), await df('porto')]).toEqual([0, 0]);
    await expectExactStats(schema);
    // The ranking follows: "trip" is now in no fact, "holiday" in one.
    expect((await store.search(scope, { query: 'trip' })).map((h) => h.fact.id)).toEqual([]);
    expect((await store.search(scope, { query: 'holidays' })).map((h) => h.fact.id)).toEqual(['a']);
  });

  it('a restore larger than one INSERT statement stores every fact with exact statistics, then vacuums them', async () => {
    const { store, schema } = await factStore();
    // 15 parameters a row: 4,369 rows a statement, so 10,000 take three statements (and reach VACUUM_AFTER_ROWS).
    const report = await restoreFacts(
      store,
      10_000,
      (i) => `note ${i} about ${['tea', 'chess', 'rowing'][i % 3]}${i === 9_999 ? ' and a zeppelin' : ''}`,
    );
    expect(report.records).toBe(10_000);
    expect(await store.count({ userId: 'u1' })).toBe(10_000);
    await expectExactStats(schema);
    expect((await store.search({ userId: 'u1' }, { query: 'zeppelin' }))[0]?.fact.id).toBe('f9999');
    // The statistics rows the triggers updated once per statement are vacuumed before restore returns.
    const [vacuumed] = await sql().unsafe(
      `select last_vacuum is not null as done from pg_stat_user_tables where schemaname = $1 and relname = 'fact_terms'`,
      [schema],
    );
    expect(vacuumed?.done).toBe(true);
  });

  it('a large restore leaves the facts table analysed and vacuumed before it returns', async () => {
    const { store, schema } = await factStore();
    await restoreFacts(
      store,
      VACUUM_AFTER_ROWS,
      (i) => `note ${i} about ${['tea', 'chess', 'rowing'][i % 3]}`,
    );
    // Without statistics the planner guesses one row and walks the partition; until a vacuum the GIN index's
    // pending list (every restored fact) is scanned by every search. `pg_class` is updated by both at once.
    const [facts] = await sql().unsafe(
      `select reltuples::int as rows, relallvisible > 0 as vacuumed from pg_class where oid = $1::regclass`,
      [`"${schema}".facts`],
    );
    expect(facts).toEqual({ rows: VACUUM_AFTER_ROWS, vacuumed: true });
  });
  it('the same query again with no write in between is answered from the last ranking; any write ranks afresh', async () => {
    const { client, sent } = countingClient(cleanup);
    const { store, schema } = await factStore(client);
    const scope = { userId: 'u1' };
    // 1,500 facts: ranked from this process's index of the partition, kept while its revision holds.
    await restoreFacts(
      store,
      1_500,
      (i) =>
        `Note ${i}: the user ${['drank tea', 'went rowing', 'played chess', 'read a book', 'visited the club'][i % 5]} ${['on Monday', 'with friends', 'at home'][i % 3]}`,
    );
    const query = 'Which tea did the user drink at the rowing club with friends?';
    const ids = (hits: Array<{ fact: { id: string }; score: number }>) =>
      hits.map((h) => [h.fact.id, h.score]);
    // A store of its own (another process) searches from scratch.
    const fresh = async (limit: number) =>
      ids(await new PostgresFactStore({ client: sql(), schema }).search(scope, { query, limit }));

    const first = await store.search(scope, { query, limit: 8 });
    sent.length = 0;
    const second = await store.search(scope, { query, limit: 20 });
    const statements = sent.length;
    expect(ids(second)).toEqual(await fresh(20));
    expect(ids(first)).toEqual(ids(second).slice(0, 8));
    // The partition's revision, then the winners' rows.
    expect(statements).toBe(2);

    // A write by another store (another process) moves the revision on: the next search ranks again.
    await new PostgresFactStore({ client: sql(), schema }).create(scope, {
      id: 'oolong',
      content: 'The user drank oolong tea at the rowing club with friends',
    });
    const third = await store.search(scope, { query, limit: 20 });
    expect(ids(third)).toEqual(await fresh(20));
    expect(ids(third).map(([id]) => id)).toContain('oolong');
    // So does a write through this store.
    await store.delete(scope, 'oolong');
    expect(ids(await store.search(scope, { query, limit: 8 }))).toEqual(await fresh(8));
  });

  it("a search's records come from this process's copies while the partition's revision holds, fresh after any write", async () => {
    const { client, sent } = countingClient(cleanup);
    const { store, schema } = await factStore(client);
    const scope = { userId: 'u1' };
    await restoreFacts(store, 50, (i) => `Note ${i}: the user ${['drank tea', 'went rowing'][i % 2]}`);
    const query = 'What did the user drink?';
    const first = await store.search(scope, { query, limit: 5 });
    sent.length = 0;
    expect(await store.search(scope, { query, limit: 5 })).toEqual(first);
    // The partition's revision only: the ranking and the records are this process's.
    expect(sent).toHaveLength(1);

    // Another store (another process) edits a returned fact: the revision moves on, the record is read again.
    const top = first[0]!.fact;
    const other = new PostgresFactStore({ client: sql(), schema });
    await other.update(scope, top.id, { metadata: { checked: true } });
    const after = await store.search(scope, { query, limit: 5 });
    expect(after).toEqual(await other.search(scope, { query, limit: 5 }));
    expect(after[0]!.fact).toMatchObject({
      id: top.id,
      metadata: { checked: true },
      version: top.version + 1,
    });
    // Records handed out are frozen, as core's in-memory stores hand theirs out.
    expect(Object.isFrozen(after[0]!.fact)).toBe(true);
  });

  it('a fact this process wrote is its own record after the write, unless another write changed it since', async () => {
    const { client, sent } = countingClient(cleanup);
    const { store, schema } = await factStore(client);
    const scope = { userId: 'u1' };
    await restoreFacts(store, 50, (i) => `Note ${i}: the user ${['drank tea', 'went rowing'][i % 2]}`);
    await store.search(scope, { query: 'What did the user drink?', limit: 5 });

    // The exchange a turn stores, recalled by the next turn: the revision statement only, no read of it.
    const stored = await store.create(scope, {
      content: 'The user drank espresso in Lisbon',
      category: 'event',
    });
    sent.length = 0;
    const recalled = await store.search(scope, { query: 'espresso in Lisbon', limit: 5 });
    expect(sent).toHaveLength(1);
    expect(recalled[0]!.fact).toEqual(stored);
    expect(stored).toEqual(await store.get(scope, stored.id));

    // Another process (its own clock) deletes it and creates another under the same id, at version 1 again.
    const other = new PostgresFactStore({
      client: sql(),
      schema,
      clock: { now: () => Date.parse('2031-01-01T00:00:00.000Z') },
    });
    await other.delete(scope, stored.id);
    const again = await other.create(scope, {
      id: stored.id,
      content: 'The user drank a flat white in Lisbon',
      category: 'event',
    });
    expect(again.version).toBe(stored.version);
    const recreated = await store.search(scope, { query: 'drank in Lisbon', limit: 5 });
    expect(recreated.find((h) => h.fact.id === stored.id)?.fact).toEqual(again);

    // This process updates it, then another process does: the record read is the other's.
    const mine = await store.update(scope, stored.id, { tags: ['coffee'] });
    const theirs = await other.update(scope, stored.id, { content: 'The user drank a cortado in Lisbon' });
    expect(theirs.version).toBe(mine.version + 1);
    const updated = await store.search(scope, { query: 'drank in Lisbon', limit: 5 });
    expect(updated.find((h) => h.fact.id === stored.id)?.fact).toEqual(theirs);
  });

  it('statistics stay exact under concurrent writes from two connections', async () => {
    const schema = freshSchema();
    const a = postgres(pgUrl, { max: 4, onnotice: () => {} });
    const b = postgres(pgUrl, { max: 4, onnotice: () => {} });
    cleanup.push(() => Promise.all([a.end({ timeout: 5 }), b.end({ timeout: 5 })]));
    const { store: one } = await factStore(a, schema);
    const { store: two } = await factStore(b, schema);
    const scope = { userId: 'u1' };
    const words = ['red', 'green', 'blue', 'bike', 'car', 'train', 'morning', 'evening'];
    const text = (i: number) => `${words[i % 8]} ${words[(i * 3) % 8]} ${words[(i * 5 + 1) % 8]} item ${i}`;
    const writes = (store: PostgresFactStore, side: string) =>
      Array.from({ length: 40 }, async (_, i) => {
        const id = `${side}${i}`;
        await store.create(scope, { id, content: text(i) });
        if (i % 3 === 0) await store.update(scope, id, { content: text(i + 1) });
        if (i % 4 === 0) await store.delete(scope, id);
      });
    await Promise.all([...writes(one, 'a'), ...writes(two, 'b'), ...writes(one, 'c'), ...writes(two, 'd')]);
    await expectExactStats(schema);
    // A restore replacing the partition while the other connection writes elsewhere.
    const snap = await one.snapshot({ userId: 'u1' });
    await Promise.all([
      two.restore(snap),
      ...Array.from({ length: 20 }, (_, i) => one.create({ userId: 'u2' }, { content: text(i) })),
    ]);
    await expectExactStats(schema);
  });

  it('one user’s facts never change another user’s ranking', async () => {
    const { store, schema } = await factStore();
    const alice = { userId: 'alice' };
    const bob = { userId: 'bob' };
    await store.create(alice, { id: 'a1', content: 'Alice plays the violin on weekends' });
    await store.create(alice, { id: 'a2', content: 'Alice plays chess online' });
    await store.create(alice, { id: 'a3', content: 'Alice bought a violin case' });
    const before = await ranked(store, alice, 'violin chess');
    // Bob makes "violin" common and "chess" rare in his own partition, and holds the same ids.
    for (let i = 0; i < 30; i++) await store.create(bob, { content: `Bob tunes his violin ${i}` });
    await store.create(bob, { id: 'a2', content: 'Bob plays chess' });
    expect(await ranked(store, alice, 'violin chess')).toEqual(before);
    const bobs = await store.search(bob, { query: 'chess' });
    expect(bobs[0]?.fact).toMatchObject({ id: 'a2', userId: 'bob' });
    expect(bobs.every((h) => h.fact.userId === 'bob')).toBe(true);
    await expectExactStats(schema);
  });

  it('setup() analyses facts stored before the search terms existed, and counts them', async () => {
    // The schema as migration 0005 left it (tsvector search), with facts written by then.
    const schema = await schemaBefore('search_terms');
    cleanup.push(() => dropSchema(schema));
    for (const [id, content] of [
      ['f1', 'User went to Kyoto'],
      ['f2', 'User bought a bike'],
    ]) {
      await sql().unsafe(
        `insert into "${schema}".facts (user_id, id, content, category, tags, tag_keys, metadata, provenance, created_at, updated_at)
         values ('u1', $1, $2, 'travel', '[]', '{}', '{}', '{"source":"import"}', now(), now())`,
        [id!, content!],
      );
    }
    const store = new PostgresFactStore({ client: sql(), schema });
    await store.setup();
    // Irregular verbs are core's: "go" finds "went", "buy" finds "bought".
    expect((await store.search({ userId: 'u1' }, { query: 'where did the user go?' }))[0]?.fact.id).toBe(
      'f1',
    );
    expect((await store.search({ userId: 'u1' }, { query: 'buy' }))[0]?.fact.id).toBe('f2');
    await expectExactStats(schema);
  });
});

/** Restores `count` facts of user u1, fact i saying `content(i)`; the restore's report. */
async function restoreFacts(
  store: { restore: (snapshot: unknown) => Promise<unknown> },
  count: number,
  content: (i: number) => string,
): Promise<{ records: number }> {
  const at = new Date().toISOString();
  return (await store.restore({
    format: 'kioku.snapshot',
    schemaVersion: 1,
    kind: 'facts',
    createdAt: at,
    selector: { userId: 'u1' },
    records: Array.from({ length: count }, (_, i) => ({
      id: `f${i}`,
      userId: 'u1',
      content: content(i),
      category: 'general',
      tags: [],
      metadata: {},
      provenance: { source: 'import' as const },
      createdAt: at,
      updatedAt: at,
      version: 1,
    })),
  })) as { records: number };
}
