import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Clock } from '@kioku/core';
import { factStoreSuite, type StoreHarness } from '@kioku/store-test-suite';
import { SqliteFactStore } from '../src/index.js';

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
      return make({ file: where.file, clock: ctx.clock });
    },
    destroy(store) {
      store.close();
      const where = files.get(store);
      if (where) rmSync(where.dir, { recursive: true, force: true });
    },
  };
}

factStoreSuite(sqliteHarness('facts', (o) => new SqliteFactStore(o)));
