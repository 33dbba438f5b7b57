import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { KiokuStores } from '@kioku/core';
import type { StoreHarness } from '@kioku/store-test-suite';

type Clock = Parameters<StoreHarness<object>['create']>[0]['clock'];

/**
 * A conformance harness over SQLite files: each test gets a fresh file opened by `open` and set up; the
 * twin is a second connection to it (as another process), without setup.
 */
export function sqliteFileHarness<S extends object>(
  name: string,
  open: (file: string, clock: Clock) => KiokuStores,
  pick: (stores: KiokuStores) => S,
): StoreHarness<S> {
  const opened = new WeakMap<S, { stores: KiokuStores; dir?: string }>();
  return {
    name,
    async create(ctx) {
      const dir = mkdtempSync(path.join(tmpdir(), 'kioku-sqlite-harness-'));
      const stores = open(path.join(dir, 'kioku.db'), ctx.clock);
      await stores.setup();
      const store = pick(stores);
      opened.set(store, { stores, dir });
      return store;
    },
    createTwin(store, ctx) {
      const dir = opened.get(store)?.dir;
      if (!dir) throw new Error('not a store of this harness');
      const stores = open(path.join(dir, 'kioku.db'), ctx.clock);
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
