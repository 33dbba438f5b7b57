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
import { createSqliteStores } from '../src/index.js';
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

  it('setup moves a database of the earlier two-row layout to one row per fact, leaving nothing of the old', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'kioku-sqlite-records-'));
    const file = path.join(dir, 'kioku.db');
    try {
      // What the earlier record backend left: records without search columns, a second row per fact
      // (`kioku_record_facts`) with its own FTS5 index and counts.
      const fact: Fact = {
        id: 'f1',
        userId: 'u1',
        content: 'Caroline paints sunsets by the lake',
        category: 'hobbies',
        tags: ['art'],
        metadata: {},
        provenance: { source: 'user' },
        createdAt: '2026-01-01T00:00:00.000Z',
        updatedAt: '2026-01-01T00:00:00.000Z',
        version: 1,
      };
      const label = JSON.stringify(['facts', 'u1', '', '']);
      const db = new Database(file);
      db.exec(`
        CREATE TABLE kioku_record_partitions (label TEXT PRIMARY KEY, kind TEXT NOT NULL, user_id TEXT NOT NULL,
          agent_id TEXT NOT NULL, name TEXT NOT NULL, version INTEGER NOT NULL);
        CREATE TABLE kioku_records (seq INTEGER PRIMARY KEY, label TEXT NOT NULL, key TEXT NOT NULL, json TEXT NOT NULL);
        CREATE UNIQUE INDEX kioku_records_key ON kioku_records (label, key);
        CREATE INDEX kioku_records_order ON kioku_records (label, seq);
        CREATE TABLE kioku_record_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO kioku_record_meta VALUES ('analyzer', 'an earlier analyzer');
        CREATE TABLE kioku_record_facts (seq INTEGER PRIMARY KEY, label TEXT NOT NULL, search_terms TEXT NOT NULL);
        CREATE VIRTUAL TABLE kioku_record_facts_fts USING fts5(search_terms, content='kioku_record_facts', content_rowid='seq');
        CREATE TABLE kioku_record_search_stats (table_name TEXT NOT NULL, scope TEXT NOT NULL, rows INTEGER NOT NULL,
          terms INTEGER NOT NULL, changes INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (table_name, scope));
        CREATE TRIGGER kioku_records_fact_delete AFTER DELETE ON kioku_records BEGIN
          DELETE FROM kioku_record_facts WHERE seq = old.seq;
        END;`);
      db.prepare('INSERT INTO kioku_record_partitions VALUES (?, ?, ?, ?, ?, ?)').run(
        label,
        'facts',
        'u1',
        '',
        '',
        1,
      );
      db.prepare('INSERT INTO kioku_records (seq, label, key, json) VALUES (1, ?, ?, ?)').run(
        label,
        fact.id,
        JSON.stringify(fact),
      );
      db.prepare('INSERT INTO kioku_record_facts VALUES (1, ?, ?)').run(label, 'carolin paint sunset lake');
      db.prepare("INSERT INTO kioku_record_search_stats VALUES ('kioku_record_facts', 'p00', 1, 4, 1)").run();
      db.close();
      const reopened = createSqliteStores({ file });
      await reopened.setup();
      await reopened.setup();
      const scope = { userId: 'u1' };
      expect((await reopened.facts.search(scope, { query: 'sunset painting' })).map((h) => h.fact)).toEqual([
        fact,
      ]);
      expect(await reopened.facts.count(scope, { tags: ['ART'] })).toBe(1);
      expect(await reopened.facts.get(scope, 'f1')).toEqual(fact);
      await reopened.close();
      const after = new Database(file, { readonly: true });
      const names = after
        .prepare(
          "SELECT name FROM sqlite_master WHERE name LIKE 'kioku_record_facts%' OR name = 'kioku_records_order'",
        )
        .all();
      expect(names).toEqual([]);
      const stale = after
        .prepare("SELECT count(*) FROM kioku_record_search_stats WHERE table_name = 'kioku_record_facts'")
        .pluck()
        .get();
      expect(stale).toBe(0);
      expect(after.prepare('SELECT count(*) FROM kioku_records').pluck().get()).toBe(1);
      after.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
