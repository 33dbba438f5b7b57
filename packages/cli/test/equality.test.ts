import path from 'node:path';
import type { DetailRecord, Fact, KnowledgeDocument, Plan, WorkingEntry } from '@kioku/core';
import type { SessionRecord, SnapshotEnvelope, SnapshotSelector } from '@kioku/core/store';
import { ManualClock } from '@kioku/core/testing';
import { createJsonStores } from '@kioku/store-json';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Backend, KINDS, openBackend, parseBackend, restoreKinds, snapshotKinds } from '../src/index.js';
import { canonical, fillAllKinds, pgBackend, pgUrl, redisBackend, redisUrl, tempDir } from './helpers.js';

/**
 * The backend-migration guarantee: snapshot from JSON, restore into SQLite, snapshot, restore into
 * PostgreSQL, snapshot — the three snapshots of every kind are equal (ignoring when each was taken, with
 * records in a canonical order). Every store runs on one ManualClock, so nothing expires in between and
 * no store stamps a time of its own. It goes through the CLI's own openBackend/snapshotKinds/restoreKinds,
 * the path `kioku migrate` takes.
 */
describe.skipIf(pgUrl === '')('JSON → SQLite → PostgreSQL', () => {
  const clock = new ManualClock(Date.UTC(2025, 0, 15, 9, 30));
  let dir: string;
  let cleanup: () => Promise<void>;
  let json: Backend;
  let sqlite: Backend;
  let pg: Backend;

  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir());
    await fillAllKinds(createJsonStores({ directory: path.join(dir, 'json'), clock }), clock);
    json = await openBackend(parseBackend(`json:${path.join(dir, 'json')}`), { role: 'source', clock });
    sqlite = await openBackend(parseBackend(`sqlite:${path.join(dir, 'kioku.db')}`), {
      role: 'target',
      clock,
    });
    // This run's database was created empty by global-setup.ts; the schema is this test's alone.
    pg = await openBackend(parseBackend(pgBackend('equality')), { role: 'target', clock });
  });

  afterAll(async () => {
    await Promise.all([json?.close(), sqlite?.close(), pg?.close()]);
    await cleanup?.();
  });

  async function chain(selector: SnapshotSelector) {
    const fromJson = await snapshotKinds(json, KINDS, selector);
    await restoreKinds(sqlite, fromJson);
    const fromSqlite = await snapshotKinds(sqlite, KINDS, selector);
    await restoreKinds(pg, fromSqlite);
    const fromPg = await snapshotKinds(pg, KINDS, selector);
    return { fromJson, fromSqlite, fromPg };
  }

  it('gives three equal snapshots of every kind for all users', async () => {
    const { fromJson, fromSqlite, fromPg } = await chain({ allUsers: true });
    for (const kind of KINDS) {
      const source = canonical(fromJson[kind]);
      expect(source.records.length, kind).toBeGreaterThan(0);
      expect(canonical(fromSqlite[kind]), `${kind}: JSON → SQLite`).toStrictEqual(source);
      expect(canonical(fromPg[kind]), `${kind}: SQLite → PostgreSQL`).toStrictEqual(source);
    }
    // The data exercises what the kinds can hold (so the equality above means something).
    const records = <T>(kind: (typeof KINDS)[number]) => canonical(fromJson[kind]).records as T[];
    const facts = records<Fact>('facts');
    expect(facts).toHaveLength(9);
    expect(facts.some((f) => f.createdAt !== f.updatedAt)).toBe(true);
    expect(facts.some((f) => Object.keys(f.metadata).length > 0 && f.provenance.source === 'assistant')).toBe(
      true,
    );
    // Three long documents (several chunks each) and a bare one.
    const documents = records<KnowledgeDocument>('documents');
    expect(documents.filter((d) => d.chunks.length > 1)).toHaveLength(3);
    expect(documents.filter((d) => d.description === undefined)).toHaveLength(1);
    const plans = records<Plan>('plans');
    expect(plans.map((p) => p.isComplete)).toEqual([false, false, true]);
    expect(plans[0]).toMatchObject({
      steps: [
        { status: 'completed', notes: 'React, Node.js, PostgreSQL' },
        { status: 'in_progress' },
        {},
        {},
      ],
      contextNotes: [{}, {}],
    });
    expect(records<WorkingEntry>('working')).toHaveLength(7);
    const session = records<SessionRecord>('sessions')[0]!;
    expect(session.kv.map((e) => e.key)).toEqual(['kioku.recall.injected', 'city']);
    expect(session.transcript).toHaveLength(6);
    expect(session.transcript[2]?.toolCalls).toHaveLength(2);
    expect(session.transcript[3]?.toolCallId).toBe('call_1');
    expect(records<DetailRecord>('details').filter((d) => !d.active)).toHaveLength(3);
  });

  it.skipIf(redisUrl === '')('and on into Redis: a fourth equal snapshot', async () => {
    const redis = await openBackend(parseBackend(redisBackend()), { role: 'target', clock });
    try {
      const { fromJson, fromPg } = await chain({ allUsers: true });
      await restoreKinds(redis, fromPg);
      const fromRedis = await snapshotKinds(redis, KINDS, { allUsers: true });
      for (const kind of KINDS) {
        expect(canonical(fromRedis[kind]), `${kind}: PostgreSQL → Redis`).toStrictEqual(
          canonical(fromJson[kind]),
        );
      }
    } finally {
      await redis.close();
    }
  });

  it('gives three equal snapshots of one user, with the same selector and nothing of other users', async () => {
    const { fromJson, fromSqlite, fromPg } = await chain({ userId: 'alice' });
    for (const kind of KINDS) {
      const source = canonical(fromJson[kind]);
      expect(source.records.length, kind).toBeGreaterThan(0);
      expect(JSON.stringify(source)).not.toContain('"bob"');
      expect((fromPg[kind] as SnapshotEnvelope<unknown>).selector).toEqual({ userId: 'alice' });
      expect(canonical(fromSqlite[kind]), `${kind}: JSON → SQLite`).toStrictEqual(source);
      expect(canonical(fromPg[kind]), `${kind}: SQLite → PostgreSQL`).toStrictEqual(source);
    }
  });
});
