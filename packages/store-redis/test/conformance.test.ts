import { systemClock } from '@kioku/core/adapter';
import {
  type BundleHarness,
  detailStoreSuite,
  documentStoreSuite,
  factStoreSuite,
  forgetTests,
  lifecycleTests,
  memoryPassesSuite,
  planStoreSuite,
  sessionStoreSuite,
  storesBundleSuite,
  workingMemoryStoreSuite,
} from '@kioku/store-test-suite';
import { afterAll, describe } from 'vitest';
import {
  createRedisStores,
  RedisDetailStore,
  RedisDocumentStore,
  RedisFactStore,
  RedisPlanStore,
  RedisSessionStore,
  RedisWorkingMemoryStore,
} from '../src/index.js';
import { closeSharedClient, deletePrefix, freshPrefix, noServer, redisHarness, redisUrl } from './helpers.js';

// Every test gets its own key prefix; the twin is a second client on the same prefix.
describe.skipIf(noServer)('Redis conformance', () => {
  afterAll(closeSharedClient);
  factStoreSuite(redisHarness('facts', (o) => new RedisFactStore(o)));
  documentStoreSuite(redisHarness('documents', (o) => new RedisDocumentStore(o)));
  planStoreSuite(redisHarness('plans', (o) => new RedisPlanStore(o)));
  // Expiry is decided by the injected clock (Redis deletes each entry on its own after its TTL too), so
  // the TTL tests run with the suite's manual clock...
  workingMemoryStoreSuite(redisHarness('working', (o) => new RedisWorkingMemoryStore(o)));
  // ...and once more on the system clock, where Redis's expiry and the store's agree.
  workingMemoryStoreSuite(
    redisHarness('working (system clock)', (o) => new RedisWorkingMemoryStore(o), {
      capabilities: { controllableClock: false },
      clock: () => systemClock,
    }),
  );
  sessionStoreSuite(redisHarness('sessions', (o) => new RedisSessionStore(o)));
  detailStoreSuite(redisHarness('details', (o) => new RedisDetailStore(o)));
  let prefix = '';
  const bundle: BundleHarness = {
    name: 'createRedisStores',
    create: () => {
      prefix = freshPrefix();
      return createRedisStores({ url: redisUrl, prefix });
    },
    reopen: () => createRedisStores({ url: redisUrl, prefix }),
    destroy: async () => {
      await deletePrefix(prefix);
    },
  };
  storesBundleSuite(bundle);
  lifecycleTests(bundle);
  forgetTests(bundle);
  memoryPassesSuite(bundle);
});
