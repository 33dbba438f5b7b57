import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { KiokuStores, StoreKind } from '@kioku/core';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteNativeStores, createSqliteStores, moveSqliteToRecords } from '../src/index.js';

const KINDS: StoreKind[] = ['facts', 'documents', 'plans', 'working', 'sessions', 'details'];

/** Every record of every kind, for every user, in a stable order. */
async function everything(stores: KiokuStores): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const kind of KINDS) {
    const { records } = await (stores[kind] as KiokuStores['facts']).snapshot({ allUsers: true });
    out[kind] = [...records].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  }
  return out;
}

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('moveSqliteToRecords', () => {
  it('moves every kind of the native layout into the records layout as it was, then empties the native tables', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'kioku-sqlite-move-'));
    const file = path.join(dir, 'kioku.db');
    const native = createSqliteNativeStores({ file });
    await native.setup();
    for (const scope of [{ userId: 'u1' }, { userId: 'u2', agentId: 'a1' }]) {
      const fact = await native.facts.create(scope, {
        content: `Caroline paints sunsets (${scope.userId})`,
        tags: ['art'],
      });
      await native.facts.update(scope, fact.id, { content: 'Caroline paints lakes' });
      await native.facts.create(scope, { content: 'Melanie runs', eventTime: '2026-01-02T00:00:00.000Z' });
      await native.documents.create(scope, {
        title: 'Guide',
        text: 'A long guide about painting. '.repeat(200),
      });
      await native.plans.create(
        { ...scope, threadId: 't1' },
        { goal: 'Paint', steps: ['buy paint', 'paint'] },
      );
      await native.working.set(scope, 'session/s1/topic', 'painting', { ttlMs: 60_000, tags: ['now'] });
      const session = await native.sessions.create(scope);
      await native.sessions.transcriptAppend(scope, session.id, [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
      ]);
      await native.sessions.kvSet(scope, session.id, 'mood', 'good');
      await native.details.create(scope, { description: 'tool output', content: 'ls -la output' });
    }
    const before = await everything(native);
    await native.close();

    const moved = await moveSqliteToRecords(file);
    expect(moved).toEqual({ facts: 4, documents: 2, plans: 2, working: 2, sessions: 2, details: 2 });

    const records = createSqliteStores({ file });
    await records.setup();
    expect(await everything(records)).toEqual(before);
    // Reads that go through the records layout's own paths: search push-down, transcript, expiry.
    expect((await records.facts.search({ userId: 'u1' }, { query: 'lakes' }))[0]?.fact.content).toBe(
      'Caroline paints lakes',
    );
    const [session] = await records.sessions.list({ userId: 'u1' });
    expect(
      (await records.sessions.transcriptReadLast({ userId: 'u1' }, session!.id, 5)).map((e) => e.content),
    ).toEqual(['hi', 'hello']);
    expect((await records.working.get({ userId: 'u1' }, 'session/s1/topic'))?.value).toBe('painting');
    await records.close();

    const db = new Database(file, { readonly: true });
    for (const table of [
      'kioku_facts',
      'kioku_documents',
      'kioku_document_chunks',
      'kioku_plans',
      'kioku_working',
      'kioku_sessions',
      'kioku_session_kv',
      'kioku_session_transcript',
      'kioku_details',
    ])
      expect(db.prepare(`SELECT count(*) FROM ${table}`).pluck().get(), table).toBe(0);
    // No term of the moved text is left in the native search indexes' segments.
    const indexes = db
      .prepare(
        "SELECT name FROM sqlite_master WHERE name LIKE 'kioku\\_%\\_fts\\_vocab' ESCAPE '\\' AND name <> 'kioku_records_fts_vocab'",
      )
      .pluck()
      .all() as string[];
    expect(indexes.length).toBeGreaterThan(0);
    for (const vocab of indexes)
      expect(db.prepare(`SELECT count(*) FROM "${vocab}"`).pluck().get(), vocab).toBe(0);
    db.close();

    // Again: nothing left to move, nothing changed.
    expect(await moveSqliteToRecords(file)).toEqual({
      facts: 0,
      documents: 0,
      plans: 0,
      working: 0,
      sessions: 0,
      details: 0,
    });
    const again = createSqliteStores({ file });
    expect(await everything(again)).toEqual(before);
    await again.close();
  });

  it('moves nothing when a record cannot be moved (one transaction)', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'kioku-sqlite-move-'));
    const file = path.join(dir, 'kioku.db');
    const native = createSqliteNativeStores({ file });
    await native.setup();
    await native.facts.create({ userId: 'u1' }, { content: 'kept where it was' });
    await native.details.create({ userId: 'u1' }, { description: 'tool output', content: 'output' });
    await native.close();
    // A detail row the records layout refuses (not a valid detail), after the facts moved.
    const db = new Database(file);
    db.prepare("UPDATE kioku_details SET type = 'not a type'").run();
    db.close();
    await expect(moveSqliteToRecords(file)).rejects.toThrow();
    const check = new Database(file, { readonly: true });
    expect(check.prepare('SELECT count(*) FROM kioku_facts').pluck().get()).toBe(1);
    expect(check.prepare('SELECT count(*) FROM kioku_records').pluck().get()).toBe(0);
    check.close();
  });

  it("the records layout's setup moves a native database it opens, and says so in its report", async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'kioku-sqlite-move-'));
    const file = path.join(dir, 'kioku.db');
    const native = createSqliteNativeStores({ file });
    await native.setup();
    const scope = { userId: 'u1' };
    const fact = await native.facts.create(scope, { content: 'Caroline paints lakes' });
    await native.documents.create(scope, { title: 'Guide', text: 'How to paint a lake at dawn.' });
    await native.details.create(scope, { description: 'tool output', content: 'easel inventory' });
    await native.close();

    const records = createSqliteStores({ file });
    const report = await records.setup();
    expect(report).toEqual({
      migrationsApplied: 1,
      reindexed: false,
      moved: { facts: 1, documents: 1, plans: 0, working: 0, sessions: 0, details: 1 },
    });
    expect(await records.facts.get(scope, fact.id)).toEqual(fact);
    // Searched in SQL by a bundle that has not decoded the partitions.
    const fresh = createSqliteStores({ file });
    expect((await fresh.documents.search(scope, { query: 'lake dawn' }))[0]?.title).toBe('Guide');
    expect((await fresh.details.search(scope, { query: 'easel' }))[0]?.detail.content).toBe(
      'easel inventory',
    );
    expect(await fresh.setup()).toEqual({ migrationsApplied: 0, reindexed: false });
    await fresh.close();
    await records.close();
  });
});
