/**
 * `bench:recall --adapter …`: the same LoCoMo protocol through a FactStore's `search`, so an adapter's own
 * search (SQLite FTS5 + core's scoring, PostgreSQL tsvector, Redis over core's index) is measured beside
 * core's. One store per adapter; each conversation is a user of its own, its dialog turns that user's facts
 * (restored from one snapshot), each question a `search` in that user's scope.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Clock, Embedder, Fact } from '@kioku/core';
import { makeEnvelope, systemClock } from '@kioku/core/adapter';
import {
  type FactStore,
  InMemoryFactStore,
  type SignalWeights,
  type VectorIndex,
  withFactEmbeddings,
  withRecallSignals,
} from '@kioku/core/store';
import type { Engine } from './engines.js';
import type { Unit } from './locomo.js';
import { redisUrl } from './store-redis.js';
import { postgresAdminUrl } from './store-sql.js';

export const RECALL_ADAPTERS = ['memory', 'json', 'sqlite', 'postgres', 'redis'] as const;
export type RecallAdapter = (typeof RECALL_ADAPTERS)[number];

const firstLine = (error: unknown) => (error as Error).message.split('\n')[0] ?? String(error);

interface OpenStore {
  store: FactStore;
  /** The store's own vector index (SQLite with `vectorDimensions`: sqlite-vec in the same file). */
  index?: VectorIndex;
  close(): Promise<void>;
}

/**
 * A fresh, empty store of the adapter, or why there is none (a missing package, no server). With
 * `vectorDimensions` (SQLite only), the store comes with its own vector index of that size.
 */
async function openStore(adapter: RecallAdapter, vectorDimensions?: number): Promise<OpenStore | string> {
  try {
    switch (adapter) {
      case 'memory':
        return { store: new InMemoryFactStore(), close: async () => {} };
      case 'json': {
        const { JsonFactStore } = await import('@kioku/store-json');
        const directory = await mkdtemp(path.join(os.tmpdir(), 'kioku-recall-json-'));
        return {
          store: new JsonFactStore({ directory }),
          close: () => rm(directory, { recursive: true, force: true }),
        };
      }
      case 'sqlite': {
        const { createSqliteStores } = await import('@kioku/store-sqlite');
        const directory = await mkdtemp(path.join(os.tmpdir(), 'kioku-recall-sqlite-'));
        const stores = createSqliteStores({
          file: path.join(directory, 'recall.db'),
          ...(vectorDimensions === undefined ? {} : { vectors: { dimensions: vectorDimensions } }),
        });
        await stores.setup();
        return {
          store: stores.facts,
          ...(stores.vectors ? { index: stores.vectors } : {}),
          close: async () => {
            await stores.close();
            await rm(directory, { recursive: true, force: true });
          },
        };
      }
      case 'postgres': {
        const { PostgresFactStore } = await import('@kioku/store-postgres');
        const postgres = (await import('postgres')).default;
        const client = postgres(postgresAdminUrl(), { onnotice: () => {}, max: 2, connect_timeout: 5 });
        const schema = `kioku_recall_${randomBytes(4).toString('hex')}`;
        const store = new PostgresFactStore({ client, schema });
        try {
          await store.setup();
        } catch (error) {
          await client.end({ timeout: 1 });
          throw error;
        }
        return {
          store,
          close: async () => {
            await client.unsafe(`drop schema if exists ${schema} cascade`);
            await client.end({ timeout: 5 });
          },
        };
      }
      case 'redis': {
        const { RedisConnection, RedisFactStore } = await import('@kioku/store-redis');
        const prefix = `kioku-recall:${randomBytes(4).toString('hex')}:`;
        const connection = new RedisConnection({ url: redisUrl(), prefix });
        await connection.setup();
        return {
          store: new RedisFactStore({ connection }),
          close: async () => {
            await connection.deleteAll();
            await connection.close();
          },
        };
      }
    }
  } catch (error) {
    return firstLine(error);
  }
}

/** LoCoMo turn ids (`D3:14`) as fact ids (`D3-14`): ids may not hold a colon. */
const factId = (unitId: string) => unitId.replace(':', '-');
const unitId = (fact: Fact) => fact.id.replace('-', ':');

export interface StoreEngineOptions {
  /** Row name (default `Kioku via <adapter> store`). */
  name?: string;
  /** Recall's signals over the store's search, with these weights; `false`: the store's search alone. */
  signals?: Partial<SignalWeights> | false;
  /** Hybrid recall with this embedder, its vector side weighing `vectorWeight` (default: the embedder's). */
  embedder?: Embedder;
  vectorWeight?: number;
  /** Hits each side (lexical, vector) brings to the fusion (default: hybrid recall's, `max(20, 3 × limit)`). */
  candidates?: number;
  /** With `embedder`, on SQLite: the vectors in the store's own sqlite-vec index instead of one in memory. */
  storeVectors?: boolean;
  /** Every ranked list the engine returned, by conversation and question (to compare two engines). */
  rankings?: Map<string, string[]>;
}

/**
 * A LoCoMo turn as the fact a deployment would store for it: its text, the session it was said in and its
 * turn there (provenance), and when it was said (event time).
 */
export function turnFact(unit: Unit, userId: string, storedAt: string): Fact {
  return {
    id: factId(unit.id),
    userId,
    content: unit.text,
    category: 'general',
    tags: [],
    metadata: {},
    provenance: { source: 'import', sessionId: `session-${unit.session}`, turn: unit.turn },
    eventTime: new Date(unit.time).toISOString(),
    createdAt: storedAt,
    updatedAt: storedAt,
    version: 1,
  };
}

/**
 * The store as recall reads it: the adapter's search, fused with vectors when an embedder is given, with
 * recall's signals re-ranking the result (the store's own hits first, then the fusion, then the signals).
 */
function recallStore(
  store: FactStore,
  options: StoreEngineOptions,
  clock: Clock,
  index: VectorIndex | undefined,
): FactStore {
  const signalled =
    options.signals === false ? store : withRecallSignals(store, { weights: options.signals ?? {}, clock });
  if (!options.embedder) return signalled;
  return withFactEmbeddings(signalled, {
    embedder: options.embedder,
    ...(index ? { index } : {}),
    ...(options.vectorWeight === undefined ? {} : { weights: { vector: options.vectorWeight } }),
    ...(options.candidates === undefined ? {} : { candidates: options.candidates }),
  });
}

/** The engine, and a `close` for the store behind it; or why the adapter is not available. */
export async function storeEngine(
  adapter: RecallAdapter,
  options: StoreEngineOptions = {},
): Promise<{ engine: Engine; close(): Promise<void> } | string> {
  const dimensions = options.storeVectors ? options.embedder?.dimensions : undefined;
  const opened = await openStore(adapter, dimensions);
  if (typeof opened === 'string') return opened;
  if (dimensions !== undefined && !opened.index) {
    await opened.close();
    return `${adapter} has no vector index of its own here`;
  }
  // Questions are asked the day after the conversation's last turn ("last week" means the week before).
  let askedAt = 0;
  const store = recallStore(opened.store, options, { now: () => askedAt }, opened.index);
  let conversations = 0;
  const now = new Date().toISOString();
  const engine: Engine = {
    name: options.name ?? `Kioku via ${adapter} store`,
    async build(units: readonly Unit[]) {
      const scope = { userId: `locomo-${++conversations}` };
      const records = units.map((unit) => turnFact(unit, scope.userId, now));
      askedAt = Math.max(...units.map((unit) => unit.time)) + 86_400_000;
      await store.restore(makeEnvelope('facts', { userId: scope.userId }, records, systemClock));
      return async (query: string, limit: number) => {
        const ids = (await store.search(scope, { query, limit })).map((hit) => unitId(hit.fact));
        options.rankings?.set(`${scope.userId}\u0000${query}\u0000${limit}`, ids);
        return ids;
      };
    },
  };
  return { engine, close: opened.close };
}
