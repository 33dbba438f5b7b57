import { randomBytes } from 'node:crypto';
import { type QdrantTestServer, startQdrantTestServer } from '@kioku/qdrant-test-server';
import { QdrantClient } from '@qdrant/js-client-rest';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { QdrantVectorIndex, type QdrantVectorIndexOptions } from '../src/index.js';

/**
 * Where the tests' Qdrant is: `QDRANT_URL` (a real server, e.g. `docker run -p 6333:6333
 * qdrant/qdrant`), or else an in-process `@kioku/qdrant-test-server` that validates every request and
 * response against Qdrant's OpenAPI schema. With the test server, every test also asserts that it
 * recorded no violation.
 */
export function useQdrant() {
  const realUrl = process.env.QDRANT_URL;
  let server: QdrantTestServer | undefined;
  let url = realUrl ?? '';
  const collections = new Set<string>();

  beforeAll(async () => {
    if (realUrl) return;
    server = await startQdrantTestServer();
    url = server.url;
  });

  afterEach(() => {
    if (server) expect(server.violations, server.report()).toEqual([]);
  });

  afterAll(async () => {
    if (realUrl) {
      // Leave no test collection behind on a real server, even when a test failed before its cleanup.
      const client = newClient();
      for (const name of collections) await client.deleteCollection(name).catch(() => undefined);
    }
    await server?.stop();
  });

  const newClient = () => new QdrantClient({ url, checkCompatibility: !realUrl });

  return {
    get real() {
      return realUrl !== undefined;
    },
    get url() {
      return url;
    },
    /** The test server, when no real Qdrant is used. */
    get server() {
      return server;
    },
    client: newClient,
    collectionName() {
      const name = `kioku_test_${randomBytes(6).toString('hex')}`;
      collections.add(name);
      return name;
    },
    async index(options: Partial<QdrantVectorIndexOptions> = {}) {
      const index = new QdrantVectorIndex({
        client: newClient(),
        collection: this.collectionName(),
        dimensions: 8,
        ...options,
      });
      await index.setup();
      return index;
    },
    async drop(index: QdrantVectorIndex) {
      await index.client.deleteCollection(index.collection).catch(() => undefined);
      collections.delete(index.collection);
    },
  };
}
