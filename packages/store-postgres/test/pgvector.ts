import { type PgvectorTestServer, startPgvectorTestServer } from '@kioku/pgvector-test-server';
import type { StoreHarness } from '@kioku/store-test-suite';
import postgres, { type Sql } from 'postgres';
import { afterAll, beforeAll } from 'vitest';
import { PostgresVectorIndex, type PostgresVectorIndexOptions } from '../src/index.js';
import { freshSchema } from './helpers.js';

/** A real PostgreSQL with pgvector installed, when given; its tests make and drop schemas of their own. */
const realUrl = process.env.KIOKU_PGVECTOR_URL || undefined;

export interface Pgvector {
  /** Where the server is: `KIOKU_PGVECTOR_URL`, or PGlite on a local port. */
  readonly url: string;
  readonly name: string;
  readonly real: boolean;
  /** postgres.js options for a client of this server. */
  clientOptions(): { max: number; fetch_types: boolean; onnotice: () => void };
  /** The file's shared client. */
  client(): Sql;
  /** An index of `dimensions` 8 (unless told) in a schema of its own, after `setup()`. */
  index(options?: Partial<PostgresVectorIndexOptions>): Promise<PostgresVectorIndex>;
  /** Close the index and drop its schema. */
  drop(index: PostgresVectorIndex): Promise<void>;
  /** Conformance harness: each index in a fresh schema; the twin has its own client, as another process would. */
  harness(dimensions: number): StoreHarness<PostgresVectorIndex>;
}

/**
 * PostgreSQL with pgvector for one test file: `KIOKU_PGVECTOR_URL` when set, otherwise PGlite with its
 * pgvector extension started in this worker and served over the wire protocol
 * (`@kioku/pgvector-test-server`), so postgres.js talks to it as to any server. This machine's
 * PostgreSQL has no pgvector, so the stock server cannot be used.
 *
 * On PGlite, each client gets one connection (`clientOptions()`): the socket server interleaves the
 * extended-protocol messages of concurrent connections, which can lose a pipelined query's unnamed portal.
 * For the same reason it does not fetch types (postgres.js 4 reads unknown types, such as `vector`, on a
 * second connection while the first waits): a vector then reads as its text, which the index parses.
 */
export function usePgvector(): Pgvector {
  let server: PgvectorTestServer | undefined;
  let url = realUrl ?? '';
  let shared: Sql | undefined;

  beforeAll(async () => {
    if (!realUrl) {
      server = await startPgvectorTestServer();
      url = server.url;
    }
  });

  afterAll(async () => {
    await shared?.end({ timeout: 5 });
    await server?.stop();
  });

  const clientOptions = () => ({ max: realUrl ? 4 : 1, fetch_types: !!realUrl, onnotice: () => {} });
  const client = () => {
    shared ??= postgres(url, clientOptions());
    return shared;
  };

  const pgvector: Pgvector = {
    get url() {
      return url;
    },
    name: realUrl ? 'PostgreSQL at KIOKU_PGVECTOR_URL' : 'PGlite + pgvector over the wire protocol',
    real: realUrl !== undefined,
    client,
    clientOptions,
    async index(options = {}) {
      const index = new PostgresVectorIndex({
        client: client(),
        schema: freshSchema(),
        dimensions: 8,
        ...options,
      });
      await index.setup();
      return index;
    },
    async drop(index) {
      await index.close();
      await client().unsafe(`drop schema if exists "${index.schema}" cascade`);
    },
    harness(dimensions) {
      const twins = new WeakSet<PostgresVectorIndex>();
      return {
        name: `PostgresVectorIndex (${pgvector.name})`,
        create: (ctx) => pgvector.index({ dimensions, clock: ctx.clock }),
        async createTwin(index, ctx) {
          const twin = new PostgresVectorIndex({
            url,
            clientOptions: clientOptions(),
            schema: index.schema,
            dimensions,
            clock: ctx.clock,
          });
          await twin.setup();
          twins.add(twin);
          return twin;
        },
        async destroy(index) {
          if (twins.has(index)) await index.close();
          else await pgvector.drop(index);
        },
      };
    },
  };
  return pgvector;
}
