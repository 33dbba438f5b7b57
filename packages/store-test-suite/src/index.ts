export { type BundleHarness, storesBundleSuite } from './bundle.js';
export { detailStoreSuite } from './details.js';
export { documentStoreSuite } from './documents.js';
export { factStoreSuite } from './facts.js';
export { FACT_FIXTURE, FACT_QUERIES } from './fixtures.js';
export { forgetTests } from './forget.js';
export {
  DEFAULT_CAPABILITIES,
  type Fixture,
  type StoreCapabilities,
  type StoreHarness,
  SUITE_EPOCH,
  type SuiteContext,
} from './harness.js';
export { expectKiokuError, HOSTILE_IDS, randomId, randomScope, randomThreadScope } from './helpers.js';
export { lifecycleTests } from './lifecycle.js';
export { memoryPassesSuite } from './passes.js';
export { planStoreSuite } from './plans.js';
export { sessionStoreSuite } from './sessions.js';
export {
  OUTSIDE_TEXT_DOMAIN,
  STRANGE_BUT_VALID,
  type TextDomainCase,
  textDomainTests,
} from './text-domain.js';
export { SUITE_VECTOR_DIMENSIONS, vectorIndexSuite } from './vector.js';
export { workingMemoryStoreSuite } from './working.js';
