import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Clock } from '@kioku/core';
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
import {
  createSqliteNativeStores,
  SqliteDetailStore,
  SqliteDocumentStore,
  SqliteFactStore,
  SqlitePlanStore,
  SqliteSessionStore,
  SqliteWorkingMemoryStore,
} from '../src/index.js';

interface Closable {
  close(): void;
  setup(): Promise<unknown>;
}

/**
 * Each test gets a fresh database file in a temporary directory, set up with the shipped migrations;
 * the twin is a second connection to the same file (as another process would open it), without setup.
 */
function sqliteHarness<S extends Closable>(
  name: string,
  make: (options: { file: string; clock: Clock }) => S,
): StoreHarness<S> {
  const files = new WeakMap<S, { dir: string; file: string }>();
  const twins = new WeakSet<S>();
  return {
    name: `sqlite ${name}`,
    async create(ctx) {
      const dir = mkdtempSync(path.join(tmpdir(), 'kioku-sqlite-suite-'));
      const file = path.join(dir, 'kioku.db');
      const store = make({ file, clock: ctx.clock });
      await store.setup();
      files.set(store, { dir, file });
      return store;
    },
    createTwin(store, ctx) {
      const where = files.get(store);
      if (!where) throw new Error('not a store of this harness');
      const twin = make({ file: where.file, clock: ctx.clock });
      twins.add(twin);
      return twin;
    },
    destroy(store) {
      // Twins are destroyed first and share the directory: remove it only with the original.
      store.close();
      const where = files.get(store);
      if (where && !twins.has(store)) rmSync(where.dir, { recursive: true, force: true });
    },
  };
}

factStoreSuite(sqliteHarness('facts', (o) => new SqliteFactStore(o)));
documentStoreSuite(sqliteHarness('documents', (o) => new SqliteDocumentStore(o)));
planStoreSuite(sqliteHarness('plans', (o) => new SqlitePlanStore(o)));
workingMemoryStoreSuite(sqliteHarness('working', (o) => new SqliteWorkingMemoryStore(o)));
sessionStoreSuite(sqliteHarness('sessions', (o) => new SqliteSessionStore(o)));
detailStoreSuite(sqliteHarness('details', (o) => new SqliteDetailStore(o)));

let bundleDir = '';
const bundle: BundleHarness = {
  name: 'createSqliteNativeStores',
  create: () => {
    bundleDir = mkdtempSync(path.join(tmpdir(), 'kioku-sqlite-bundle-'));
    return createSqliteNativeStores({ file: path.join(bundleDir, 'kioku.db') });
  },
  reopen: () => createSqliteNativeStores({ file: path.join(bundleDir, 'kioku.db') }),
  destroy: () => rmSync(bundleDir, { recursive: true, force: true }),
};
storesBundleSuite(bundle);
lifecycleTests(bundle);
forgetTests(bundle);
memoryPassesSuite(bundle);
