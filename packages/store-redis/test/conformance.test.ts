import { systemClock } from '@kioku/core';
import {
  detailStoreSuite,
  documentStoreSuite,
  factStoreSuite,
  planStoreSuite,
  sessionStoreSuite,
  workingMemoryStoreSuite,
} from '@kioku/store-test-suite';
import { afterAll, describe } from 'vitest';
import {
  RedisDetailStore,
  RedisDocumentStore,
  RedisFactStore,
  RedisPlanStore,
  RedisSessionStore,
  RedisWorkingMemoryStore,
} from '../src/index.js';
import { closeSharedClient, noServer, redisHarness } from './helpers.js';

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
});
