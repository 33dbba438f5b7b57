import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWireCounter, type WireCounter } from '../src/pg-wire-count.js';

// The shared server (CI starts it); bench:frameworks' round trips per turn rest on these counts.
const url = process.env.KIOKU_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

describe('the PostgreSQL wire counter', () => {
  let counter: WireCounter;
  let sql: postgres.Sql;
  /** A client straight to the server, whose statements the counter does not see. */
  const direct = postgres(url, { max: 1, onnotice: () => {} });
  beforeAll(async () => {
    counter = await startWireCounter(url);
    sql = postgres(counter.url(url), { max: 2, onnotice: () => {} });
    // Both connections open (postgres.js opens them as queries queue).
    await Promise.all([sql`select 1`, sql`select 2`, sql`select 3`]);
  });
  afterAll(async () => {
    await direct.end();
    await sql.end();
    await counter.close();
  });

  it('counts statements awaited one after another as one round trip each', async () => {
    // Prepared once first: a statement new to a connection waits for its description too (below).
    await sql`select ${0}::int as n`;
    counter.take();
    for (let i = 0; i < 3; i++) await sql`select ${i}::int as n`;
    expect(counter.take()).toEqual({ statements: 3, syncs: 3, roundTrips: 3 });
  });

  it('counts statements sent together, pipelined or on two connections, as one round trip', async () => {
    // The server answers none of the four until all have reached it: each waits for a lock the test holds
    // on a connection of its own (not counted). Otherwise a busy machine can answer the first before the
    // client has sent the last, which is then, rightly, a second round trip.
    const key = 40_421;
    const holder = await direct.reserve();
    try {
      await holder`select pg_advisory_lock(${key})`;
      counter.take();
      const together = Promise.all(
        [1, 2, 3, 4].map((n) => sql.unsafe(`select pg_advisory_xact_lock_shared(${key}), ${n} as n`)),
      );
      while (counter.counts.syncs < 4) await new Promise((resolve) => setTimeout(resolve, 10));
      await holder`select pg_advisory_unlock(${key})`;
      await together;
    } finally {
      holder.release();
    }
    expect(counter.take()).toEqual({ statements: 4, syncs: 4, roundTrips: 1 });
  });

  it('counts a transaction as the round trips it waits for', async () => {
    counter.take();
    await sql.begin(async (tx) => {
      await tx`select 1`;
      await tx`select 2`;
    });
    // begin, two statements, commit: postgres.js waits for each.
    expect(counter.take()).toMatchObject({ statements: 4, roundTrips: 4 });
  });

  it('counts the describe an unnamed statement with untyped parameters waits for as a round trip', async () => {
    counter.take();
    // postgres.js sends Parse, Describe and Flush, waits for the parameter types, then Bind, Execute, Sync.
    await sql.unsafe('select $1 as n', ['x'], { prepare: false });
    expect(counter.take()).toEqual({ statements: 1, syncs: 1, roundTrips: 2 });
    // Named and prepared on this connection already: one round trip.
    await sql.unsafe('select $1::text as n', ['x'], { prepare: true });
    counter.take();
    await sql.unsafe('select $1::text as n', ['y'], { prepare: true });
    expect(counter.take()).toEqual({ statements: 1, syncs: 1, roundTrips: 1 });
  });
});
