import {
  type Clock,
  InMemoryDetailStore,
  InMemoryDocumentStore,
  InMemoryFactStore,
  InMemoryPlanStore,
  InMemorySessionStore,
  InMemoryVectorIndex,
  InMemoryWorkingMemoryStore,
  MemoryPartitionBackend,
  type PartitionBackend,
  PartitionedDetailStore,
  PartitionedDocumentStore,
  PartitionedFactStore,
  PartitionedPlanStore,
  PartitionedSessionStore,
  PartitionedWorkingMemoryStore,
} from '@kioku/core';
import {
  detailStoreSuite,
  documentStoreSuite,
  factStoreSuite,
  planStoreSuite,
  type StoreHarness,
  SUITE_VECTOR_DIMENSIONS,
  sessionStoreSuite,
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
