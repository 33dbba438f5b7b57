import type { VectorIndex } from '@kioku/core/store';
import { type StoreHarness, SUITE_VECTOR_DIMENSIONS, vectorIndexSuite } from '@kioku/store-test-suite';
import { usePgvector } from './pgvector.js';

// The published conformance suite, on KIOKU_PGVECTOR_URL or PGlite with pgvector (see pgvector.ts).
const pgvector = usePgvector();
vectorIndexSuite(pgvector.harness(SUITE_VECTOR_DIMENSIONS) as StoreHarness<VectorIndex>);
