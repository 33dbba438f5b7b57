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
  PostgresDetailStore,
  PostgresDocumentStore,
  PostgresFactStore,
  PostgresPlanStore,
  PostgresSessionStore,
  PostgresWorkingMemoryStore,
} from '../src/index.js';
import { noServer, pgHarness, sharedClient } from './helpers.js';

// Every test gets its own schema (created by setup()); the twin is a second client on the same schema.
describe.skipIf(noServer)('PostgreSQL conformance', () => {
  afterAll(() => sharedClient().end({ timeout: 5 }));
  factStoreSuite(pgHarness('facts', (o) => new PostgresFactStore(o)));
  documentStoreSuite(pgHarness('documents', (o) => new PostgresDocumentStore(o)));
  planStoreSuite(pgHarness('plans', (o) => new PostgresPlanStore(o)));
  workingMemoryStoreSuite(pgHarness('working', (o) => new PostgresWorkingMemoryStore(o)));
  sessionStoreSuite(pgHarness('sessions', (o) => new PostgresSessionStore(o)));
  detailStoreSuite(pgHarness('details', (o) => new PostgresDetailStore(o)));
});
