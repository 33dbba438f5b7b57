import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Fact, KiokuStores } from '@kioku/core';
import { InMemoryFactStore } from '@kioku/core/store';
import {
  type BundleHarness,
  detailStoreSuite,
  documentStoreSuite,
  factStoreSuite,
  forgetTests,
  lifecycleTests,
  memoryPassesSuite,
  planStoreSuite,
  type StoreHarness,
  sessionStoreSuite,
  storesBundleSuite,
  workingMemoryStoreSuite,
} from '@kioku/store-test-suite';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createSqliteStores, SqliteRecordBackend } from '../src/index.js';
import { sqliteFileHarness } from './file-harness.js';

/** The storage seam on SQLite: every kind through `createSqliteStores`. */
function recordHarness<S extends object>(name: string, pick: (stores: KiokuStores) => S): StoreHarness<S> {
  return sqliteFileHarness(
    `sqlite records ${name}`,
    (file, clock) => createSqliteStores({ file, clock }),
    pick,
  );
}

factStoreSuite(recordHarness('facts', (s) => s.facts));
documentStoreSuite(recordHarness('documents', (s) => s.documents));
planStoreSuite(recordHarness('plans', (s) => s.plans));
workingMemoryStoreSuite(recordHarness('working', (s) => s.working));
sessionStoreSuite(recordHarness('sessions', (s) => s.sessions));
detailStoreSuite(recordHarness('details', (s) => s.details));

let bundleDir = '';
const bundle: BundleHarness = {
  name: 'createSqliteStores',
  create: () => {
    bundleDir = mkdtempSync(path.join(tmpdir(), 'kioku-sqlite-records-bundle-'));
    return createSqliteStores({ file: path.join(bundleDir, 'kioku.db') });
  },
  reopen: () => createSqliteStores({ file: path.join(bundleDir, 'kioku.db') }),
  destroy: () => rmSync(bundleDir, { recursive: true, force: true }),
};
storesBundleSuite(bundle);
lifecycleTests(bundle);
forgetTests(bundle);
memoryPassesSuite(bundle);

describe('SQLite records', () => {
  it('an emptied partition loses its row (no user id kept), and its versions still never come back', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'kioku-sqlite-records-'));
    const file = path.join(dir, 'kioku.db');
    const backend = new SqliteRecordBackend({ file });
    try {
      await backend.setup();
      const ref = { kind: 'working' as const, userId: 'alice@example.org' };
      const put = (key: string) => ({
        put: [{ key, json: JSON.stringify({ key }), append: false }],
        delete: [],
      });
      let version = 0;
      for (let i = 0; i < 5; i++) version = (await backend.apply(ref, version, put(`k${i}`)))!;
      const before = version;
      await backend.replace(ref, []);
      const db = new Database(file, { readonly: true });
      const rows = () =>
        db.prepare('SELECT count(*) FROM kioku_record_partitions WHERE user_id = ?').pluck().get(ref.userId);
      expect(rows()).toBe(0);
      expect(await backend.version(ref)).toBe(0);
      // A writer that read the partition before it was emptied loses, now and after it is written again.
      expect(await backend.apply(ref, before, put('stale'))).toBeNull();
      const next = (await backend.apply(ref, 0, put('new')))!;
      expect(next).toBeGreaterThan(before);
      expect(await backend.apply(ref, before, put('stale'))).toBeNull();
      // The same through an insert (the trigger's first version) in another emptied partition.
      const other = { kind: 'working' as const, userId: 'bob@example.org' };
      expect(await backend.insert!(other, { key: 'd1', json: '{}' })).toBe(true);
      expect(await backend.version(other)).toBeGreaterThan(before);
      db.close();
    } finally {
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a transcript append inserts one row (checked in the table directly)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'kioku-sqlite-records-'));
    const file = path.join(dir, 'kioku.db');
    const stores = createSqliteStores({ file });
    try {
      await stores.setup();
      const scope = { userId: 'u1' };
      const session = await stores.sessions.create(scope);
      await stores.sessions.transcriptAppend(scope, session.id, { role: 'user', content: 'one' });
      const db = new Database(file, { readonly: true });
      const count = () => db.prepare('SELECT count(*) FROM kioku_records').pluck().get() as number;
      const before = count();
      await stores.sessions.transcriptAppend(scope, session.id, { role: 'user', content: 'two' });
      expect(count()).toBe(before + 1);
      const keys = db
        .prepare('SELECT key FROM kioku_records WHERE key LIKE ? ORDER BY seq')
        .pluck()
        .all('t:%');
      expect(keys).toEqual(['t:000000000000', 't:000000000001']);
      db.close();
    } finally {
      await stores.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a fact search pushed down to SQLite answers as core does: same facts, order and scores', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'kioku-sqlite-records-'));
    const stores = createSqliteStores({ file: path.join(dir, 'kioku.db') });
    try {
      await stores.setup();
      const scope = { userId: 'u1' };
      const words = [
        'hiking',
        'family',
        'project',
        'deadline',
        'cooking',
        'dinner',
        'garden',
        'paint',
        'trip',
      ];
      const categories = ['work', 'work/projects', 'family', 'hobbies'];
      const facts: Fact[] = [];
      for (let i = 0; i < 240; i++) {
        const content = `note ${i}: ${words[i % 9]} and ${words[(i * 7) % 9]} with ${words[(i * 5) % 9]} on day ${i % 13}`;
        const tags = i % 4 === 0 ? ['Weekend'] : [];
        facts.push(await stores.facts.create(scope, { content, category: categories[i % 4]!, tags }));
      }
      await stores.facts.update(scope, facts[3]!.id, { content: 'hiking the family trip again' });
      await stores.facts.delete(scope, facts[5]!.id);
      const core = new InMemoryFactStore();
      await core.restore(await stores.facts.snapshot({ userId: 'u1' }));
      // A fresh bundle has not decoded the partition: its searches and counts are SQLite's.
      const fresh = createSqliteStores({ file: path.join(dir, 'kioku.db') });
      const queries = [
        { query: 'family hiking trip' },
        { query: 'project deadline', limit: 20 },
        { query: 'cooking dinner', category: 'work' },
        { query: 'garden paint', tags: ['weekend'] },
        { query: '' },
        { category: 'family', limit: 5 },
        { query: 'the of and' },
      ];
      // `stores` holds the partition decoded (its own writes and a list): it answers from memory.
      await stores.facts.list(scope);
      for (const query of queries) {
        const theirs = await core.search(scope, query);
        for (const ours of [
          await fresh.facts.search(scope, query),
          await stores.facts.search(scope, query),
        ]) {
          expect(ours.map((h) => h.fact.id)).toEqual(theirs.map((h) => h.fact.id));
          ours.forEach((hit, i) => {
            expect(hit.score).toBeCloseTo(theirs[i]!.score, 6);
            expect(hit.fact).toEqual(theirs[i]!.fact);
          });
        }
      }
      expect(await fresh.facts.count(scope)).toBe(239);
      expect(await fresh.facts.count(scope, { category: 'work' })).toBe(
        await core.count(scope, { category: 'work' }),
      );
      expect(await fresh.facts.count(scope, { tags: ['WEEKEND'] })).toBe(
        await core.count(scope, { tags: ['WEEKEND'] }),
      );
      await fresh.close();
    } finally {
      await stores.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
