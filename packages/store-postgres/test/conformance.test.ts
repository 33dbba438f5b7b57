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
  createPostgresStores,
  PostgresDetailStore,
  PostgresDocumentStore,
  PostgresFactStore,
  PostgresPlanStore,
  PostgresSessionStore,
  PostgresWorkingMemoryStore,
} from '../src/index.js';
import { dropSchema, endSharedClient, freshSchema, noServer, pgHarness, pgUrl } from './helpers.js';

// Every test gets its own schema (created by setup()); the twin is a second client on the same schema.
describe.skipIf(noServer)('PostgreSQL conformance', () => {
  afterAll(endSharedClient);
  factStoreSuite(pgHarness('facts', (o) => new PostgresFactStore(o)));
  documentStoreSuite(pgHarness('documents', (o) => new PostgresDocumentStore(o)));
  planStoreSuite(pgHarness('plans', (o) => new PostgresPlanStore(o)));
  workingMemoryStoreSuite(pgHarness('working', (o) => new PostgresWorkingMemoryStore(o)));
  sessionStoreSuite(pgHarness('sessions', (o) => new PostgresSessionStore(o)));
  detailStoreSuite(pgHarness('details', (o) => new PostgresDetailStore(o)));
  let schema = '';
  const open = () =>
    createPostgresStores({ url: pgUrl, schema, clientOptions: { max: 2, onnotice: () => {} } });
  const bundle: BundleHarness = {
    name: 'createPostgresStores',
    create: () => {
      schema = freshSchema();
      return open();
    },
    reopen: open,
    destroy: () => dropSchema(schema),
  };
  storesBundleSuite(bundle);
  lifecycleTests(bundle);
  forgetTests(bundle);
  memoryPassesSuite(bundle);
});
