import type { Clock } from '../../foundation/clock.js';
import type { Tokenizer } from '../../tokens/tokenizer.js';
import { RecordBackedPartitions } from '../backend/record-backend.js';
import { PartitionedDetailStore } from '../details/partitioned.js';
import { PartitionedDocumentStore } from '../documents/partitioned.js';
import { PartitionedFactStore } from '../facts/partitioned.js';
import { PartitionedPlanStore } from '../plans/partitioned.js';
import { PartitionedSessionStore, type SessionStoreOptions } from '../sessions/partitioned.js';
import { PartitionedWorkingMemoryStore, type WorkingMemoryOptions } from '../working/partitioned.js';
import { type KiokuStores, once } from './bundle.js';
import { PushedDownDetailStore, PushedDownDocumentStore, PushedDownFactStore } from './pushed-down.js';
import type { StorageBackend } from './storage-backend.js';
import { nameAdapter, shortName } from './with-telemetry.js';

export interface StoresOverBackendOptions {
  clock?: Clock;
  tokenizer?: Tokenizer;
  /** Chunk size of documents, in tokens (default 300). */
  chunkTokens?: number;
  working?: Omit<WorkingMemoryOptions, 'clock'>;
  sessions?: Omit<SessionStoreOptions, 'clock'>;
}

/**
 * The six stores over one storage backend: every kind's rules (validation, limits, versions, expiry,
 * search), snapshots, restore and `eraseUser` written once here, the backend only keeping records.
 * `setup` and `close` reach the backend's own when it has them.
 */
export function storesOverBackend(
  backend: StorageBackend,
  options: StoresOverBackendOptions = {},
): KiokuStores {
  const partitions = new RecordBackedPartitions(backend);
  const common = { backend: partitions, ...(options.clock ? { clock: options.clock } : {}) };
  const chunking = {
    ...(options.tokenizer ? { tokenizer: options.tokenizer } : {}),
    ...(options.chunkTokens ? { chunkTokens: options.chunkTokens } : {}),
  };
  const facts = new PartitionedFactStore(common);
  const detailOptions = { ...common, ...(options.tokenizer ? { tokenizer: options.tokenizer } : {}) };
  const stores: KiokuStores = {
    facts:
      backend.searchFacts || backend.countFacts ? new PushedDownFactStore(facts, backend, partitions) : facts,
    documents: backend.searchDocuments
      ? new PushedDownDocumentStore({ ...common, ...chunking }, backend, partitions)
      : new PartitionedDocumentStore({ ...common, ...chunking }),
    plans: new PartitionedPlanStore(common),
    working: new PartitionedWorkingMemoryStore({ ...options.working, ...common }),
    sessions: new PartitionedSessionStore({ ...options.sessions, ...common }),
    details: backend.searchDetails
      ? new PushedDownDetailStore(detailOptions, backend, partitions)
      : new PartitionedDetailStore(detailOptions),
    setup: async () => backend.setup?.(),
    close: once(async () => backend.close?.()),
  };
  // Telemetry names the adapter after the backend (`SqliteRecordBackend` → `sqlite`).
  nameAdapter(stores, shortName(backend.constructor?.name ?? '', BACKEND_SUFFIX));
  return stores;
}

const BACKEND_SUFFIX = /(File|Record|Partition)?Backend$/;
