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
  createJsonStores,
  JsonDetailStore,
  JsonDocumentStore,
  JsonFactStore,
  JsonPlanStore,
  JsonSessionStore,
  JsonWorkingMemoryStore,
} from '../src/index.js';

/**
 * Each test gets a fresh temporary directory; the twin is a second store instance (own cache, own
 * mutex) over the same directory, as another process would be.
 */
function jsonHarness<S extends object>(
  name: string,
  make: (options: { directory: string; clock: Clock }) => S,
): StoreHarness<S> {
  const directories = new WeakMap<S, string>();
  return {
    name: `json ${name}`,
    create(ctx) {
      const directory = mkdtempSync(path.join(tmpdir(), 'kioku-json-suite-'));
      const store = make({ directory, clock: ctx.clock });
      directories.set(store, directory);
      return store;
    },
    createTwin(store, ctx) {
      const directory = directories.get(store);
      if (!directory) throw new Error('not a store of this harness');
      const twin = make({ directory, clock: ctx.clock });
      directories.set(twin, directory);
      return twin;
    },
    destroy(store) {
      const directory = directories.get(store);
      if (directory) rmSync(directory, { recursive: true, force: true });
    },
  };
}

factStoreSuite(jsonHarness('facts', (o) => new JsonFactStore(o)));
documentStoreSuite(jsonHarness('documents', (o) => new JsonDocumentStore(o)));
planStoreSuite(jsonHarness('plans', (o) => new JsonPlanStore(o)));
workingMemoryStoreSuite(jsonHarness('working', (o) => new JsonWorkingMemoryStore(o)));
sessionStoreSuite(jsonHarness('sessions', (o) => new JsonSessionStore(o)));
detailStoreSuite(jsonHarness('details', (o) => new JsonDetailStore(o)));

const bundleDir = () => mkdtempSync(path.join(tmpdir(), 'kioku-json-bundle-'));
let bundleDirectory = '';
const bundle: BundleHarness = {
  name: 'createJsonStores',
  create: () => {
    bundleDirectory = bundleDir();
    return createJsonStores({ directory: bundleDirectory });
  },
  reopen: () => createJsonStores({ directory: bundleDirectory }),
  destroy: () => rmSync(bundleDirectory, { recursive: true, force: true }),
};
storesBundleSuite(bundle);
lifecycleTests(bundle);
forgetTests(bundle);
memoryPassesSuite(bundle);
