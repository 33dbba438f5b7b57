import { type Clock, createInMemoryStores, HashingEmbedder, type KiokuStores } from '@kioku/core';
import {
  InMemoryRecordBackend,
  MemoryPartitionBackend,
  type PartitionBackend,
  PartitionedDetailStore,
  PartitionedDocumentStore,
  PartitionedFactStore,
  PartitionedPlanStore,
  PartitionedSessionStore,
  PartitionedWorkingMemoryStore,
  storesOverBackend,
} from '@kioku/core/adapter';
import {
  InMemoryDetailStore,
  InMemoryDocumentStore,
  InMemoryFactStore,
  InMemoryPlanStore,
  InMemorySessionStore,
  InMemoryVectorIndex,
  InMemoryWorkingMemoryStore,
  withFactEmbeddings,
} from '@kioku/core/store';
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
  SUITE_VECTOR_DIMENSIONS,
  sessionStoreSuite,
  storesBundleSuite,
  vectorIndexSuite,
  workingMemoryStoreSuite,
} from '../src/index.js';

// Core's reference stores must pass the same suite every adapter runs.
factStoreSuite({ name: 'in-memory', create: (ctx) => new InMemoryFactStore({ clock: ctx.clock }) });
documentStoreSuite({ name: 'in-memory', create: (ctx) => new InMemoryDocumentStore({ clock: ctx.clock }) });
planStoreSuite({ name: 'in-memory', create: (ctx) => new InMemoryPlanStore({ clock: ctx.clock }) });
workingMemoryStoreSuite({
  name: 'in-memory',
  create: (ctx) => new InMemoryWorkingMemoryStore({ clock: ctx.clock }),
});
sessionStoreSuite({ name: 'in-memory', create: (ctx) => new InMemorySessionStore({ clock: ctx.clock }) });
detailStoreSuite({ name: 'in-memory', create: (ctx) => new InMemoryDetailStore({ clock: ctx.clock }) });
vectorIndexSuite({
  name: 'in-memory',
  create: () => new InMemoryVectorIndex({ dimensions: SUITE_VECTOR_DIMENSIONS }),
});

/**
 * The partitioned stores over one shared MemoryPartitionBackend: two store instances over the same
 * storage, so the suite's twin (cross-instance) tests run here too.
 */
function sharedBackend<S extends object>(
  name: string,
  make: (options: { backend: PartitionBackend; clock: Clock }) => S,
): StoreHarness<S> {
  const backends = new WeakMap<S, PartitionBackend>();
  return {
    name: `${name} over a shared MemoryPartitionBackend`,
    create(ctx) {
      const backend = new MemoryPartitionBackend();
      const store = make({ backend, clock: ctx.clock });
      backends.set(store, backend);
      return store;
    },
    createTwin(store, ctx) {
      const backend = backends.get(store);
      if (!backend) throw new Error('not a store of this harness');
      return make({ backend, clock: ctx.clock });
    },
  };
}

factStoreSuite(sharedBackend('facts', (o) => new PartitionedFactStore(o)));
documentStoreSuite(sharedBackend('documents', (o) => new PartitionedDocumentStore(o)));
planStoreSuite(sharedBackend('plans', (o) => new PartitionedPlanStore(o)));
workingMemoryStoreSuite(sharedBackend('working', (o) => new PartitionedWorkingMemoryStore(o)));
sessionStoreSuite(sharedBackend('sessions', (o) => new PartitionedSessionStore(o)));
detailStoreSuite(sharedBackend('details', (o) => new PartitionedDetailStore(o)));

/**
 * Hybrid recall wraps a store; the wrapper must keep every promise of the contract (versions, errors,
 * isolation) — only search ranking is its own, and the suite's search tests hold for it too.
 */
factStoreSuite({
  name: 'in-memory with embeddings (HybridFactStore)',
  create: (ctx) =>
    withFactEmbeddings(new InMemoryFactStore({ clock: ctx.clock }), {
      embedder: new HashingEmbedder({ dimensions: 64 }),
    }),
});

// One bundle object stands for one process here: "reopening" in-memory storage is the same bundle.
const memoryBundle = createInMemoryStores();
const memoryBundleHarness: BundleHarness = {
  name: 'createInMemoryStores',
  create: () => memoryBundle,
  reopen: () => ({ ...memoryBundle, close: async () => {} }),
};
storesBundleSuite(memoryBundleHarness);
lifecycleTests(memoryBundleHarness);
memoryPassesSuite(memoryBundleHarness);
forgetTests(memoryBundleHarness);

/** Every kind over one record-level backend; `reopen` is a second set of stores over the same records. */
const sharedRecords = new InMemoryRecordBackend();
const recordBundleHarness: BundleHarness = {
  name: 'storesOverBackend(InMemoryRecordBackend)',
  create: () => storesOverBackend(sharedRecords),
  reopen: () => storesOverBackend(sharedRecords),
};
storesBundleSuite(recordBundleHarness);
lifecycleTests(recordBundleHarness);
memoryPassesSuite(recordBundleHarness);
forgetTests(recordBundleHarness);

/**
 * The storage seam: every store kind from `storesOverBackend` over a record backend (each record stored
 * on its own, a version per partition, atomic apply). Twins are second bundles over the same records.
 */
function recordBackend<S extends object>(name: string, pick: (stores: KiokuStores) => S): StoreHarness<S> {
  const records = new WeakMap<S, InMemoryRecordBackend>();
  return {
    name: `${name} over storesOverBackend(InMemoryRecordBackend)`,
    create(ctx) {
      const backend = new InMemoryRecordBackend();
      const store = pick(storesOverBackend(backend, { clock: ctx.clock }));
      records.set(store, backend);
      return store;
    },
    createTwin(store, ctx) {
      const backend = records.get(store);
      if (!backend) throw new Error('not a store of this harness');
      return pick(storesOverBackend(backend, { clock: ctx.clock }));
    },
  };
}

factStoreSuite(recordBackend('facts', (s) => s.facts));
documentStoreSuite(recordBackend('documents', (s) => s.documents));
planStoreSuite(recordBackend('plans', (s) => s.plans));
workingMemoryStoreSuite(recordBackend('working', (s) => s.working));
sessionStoreSuite(recordBackend('sessions', (s) => s.sessions));
detailStoreSuite(recordBackend('details', (s) => s.details));
