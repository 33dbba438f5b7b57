import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { KiokuStores } from '@kioku/core';
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
import { createSqliteRecordStores } from '../src/index.js';

/**
 * The storage seam on SQLite: every kind through `createSqliteRecordStores`. Each test gets a fresh file;
 * the twin is a second connection to it (as another process), without setup.
 */
function recordHarness<S extends object>(name: string, pick: (stores: KiokuStores) => S): StoreHarness<S> {
  const opened = new WeakMap<S, { stores: KiokuStores; dir?: string }>();
  return {
    name: `sqlite records ${name}`,
    async create(ctx) {
      const dir = mkdtempSync(path.join(tmpdir(), 'kioku-sqlite-records-'));
      const stores = createSqliteRecordStores({ file: path.join(dir, 'kioku.db'), clock: ctx.clock });
      await stores.setup();
      const store = pick(stores);
      opened.set(store, { stores, dir });
      return store;
    },
    createTwin(store, ctx) {
      const dir = opened.get(store)?.dir;
      if (!dir) throw new Error('not a store of this harness');
      const stores = createSqliteRecordStores({ file: path.join(dir, 'kioku.db'), clock: ctx.clock });
      const twin = pick(stores);
      opened.set(twin, { stores });
      return twin;
    },
    async destroy(store) {
      const entry = opened.get(store);
      await entry?.stores.close();
      if (entry?.dir) rmSync(entry.dir, { recursive: true, force: true });
    },
  };
}

factStoreSuite(recordHarness('facts', (s) => s.facts));
documentStoreSuite(recordHarness('documents', (s) => s.documents));
planStoreSuite(recordHarness('plans', (s) => s.plans));
workingMemoryStoreSuite(recordHarness('working', (s) => s.working));
sessionStoreSuite(recordHarness('sessions', (s) => s.sessions));
detailStoreSuite(recordHarness('details', (s) => s.details));

let bundleDir = '';
const bundle: BundleHarness = {
  name: 'createSqliteRecordStores',
  create: () => {
    bundleDir = mkdtempSync(path.join(tmpdir(), 'kioku-sqlite-records-bundle-'));
    return createSqliteRecordStores({ file: path.join(bundleDir, 'kioku.db') });
  },
  reopen: () => createSqliteRecordStores({ file: path.join(bundleDir, 'kioku.db') }),
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
    const stores = createSqliteRecordStores({ file });
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
});
