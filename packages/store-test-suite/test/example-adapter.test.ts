import { storesOverBackend } from '@kioku/core/adapter';
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
} from '../src/index.js';
import { MapBackend } from './example-map-backend.js';

// docs/WRITING-AN-ADAPTER.md's example adapter (four methods, no optional ones) through the whole suite.
type Stores = ReturnType<typeof storesOverBackend>;

function kind<S extends object>(name: string, pick: (stores: Stores) => S): StoreHarness<S> {
  const backends = new WeakMap<S, MapBackend>();
  return {
    name: `${name} over the example MapBackend`,
    create(ctx) {
      const backend = new MapBackend();
      const store = pick(storesOverBackend(backend, { clock: ctx.clock }));
      backends.set(store, backend);
      return store;
    },
    createTwin(store, ctx) {
      const backend = backends.get(store);
      if (!backend) throw new Error('not a store of this harness');
      return pick(storesOverBackend(backend, { clock: ctx.clock }));
    },
  };
}

factStoreSuite(kind('facts', (s) => s.facts));
documentStoreSuite(kind('documents', (s) => s.documents));
planStoreSuite(kind('plans', (s) => s.plans));
workingMemoryStoreSuite(kind('working', (s) => s.working));
sessionStoreSuite(kind('sessions', (s) => s.sessions));
detailStoreSuite(kind('details', (s) => s.details));

const shared = new MapBackend();
const bundle: BundleHarness = {
  name: 'storesOverBackend(example MapBackend)',
  create: () => storesOverBackend(shared),
  reopen: () => storesOverBackend(shared),
};
storesBundleSuite(bundle);
lifecycleTests(bundle);
forgetTests(bundle);
memoryPassesSuite(bundle);
