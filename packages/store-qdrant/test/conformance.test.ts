import type { VectorIndex } from '@kioku/core/store';
import { type StoreHarness, SUITE_VECTOR_DIMENSIONS, vectorIndexSuite } from '@kioku/store-test-suite';
import { QdrantVectorIndex } from '../src/index.js';
import { useQdrant } from './harness.js';

// The published conformance suite, against a real Qdrant (QDRANT_URL) or the validating test server.
const qdrant = useQdrant();

const harness: StoreHarness<QdrantVectorIndex> = {
  name: process.env.QDRANT_URL
    ? `Qdrant at ${process.env.QDRANT_URL}`
    : 'Qdrant (OpenAPI-validating test server)',
  create: () => qdrant.index({ dimensions: SUITE_VECTOR_DIMENSIONS }),
  createTwin: async (index) => {
    const twin = new QdrantVectorIndex({
      client: qdrant.client(),
      collection: index.collection,
      dimensions: index.dimensions,
    });
    await twin.setup();
    return twin;
  },
  destroy: (index) => qdrant.drop(index),
};

// A harness of the concrete class (for `collection`), handed to the suite as the contract it tests.
vectorIndexSuite(harness as StoreHarness<VectorIndex>);
