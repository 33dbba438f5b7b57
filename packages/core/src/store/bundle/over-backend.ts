import type { Clock } from '../../foundation/clock.js';
import { parseScope, type Scope } from '../../foundation/scope.js';
import { parseOrThrow } from '../../foundation/validation.js';
import type { Tokenizer } from '../../tokens/tokenizer.js';
import { RecordBackedPartitions } from '../backend/record-backend.js';
import { PartitionedDetailStore } from '../details/partitioned.js';
import { PartitionedDocumentStore } from '../documents/partitioned.js';
import { DelegatingFactStore } from '../facts/delegating.js';
import { PartitionedFactStore } from '../facts/partitioned.js';
import {
  type FactFilter,
  FactFilterSchema,
  type FactHit,
  type FactQuery,
  FactQuerySchema,
} from '../facts/record.js';
import type { FactStore } from '../facts/store.js';
import { PartitionedPlanStore } from '../plans/partitioned.js';
import { PartitionedSessionStore, type SessionStoreOptions } from '../sessions/partitioned.js';
import { PartitionedWorkingMemoryStore, type WorkingMemoryOptions } from '../working/partitioned.js';
import { type KiokuStores, once } from './bundle.js';
import type { StorageBackend } from './storage-backend.js';

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
  return {
    facts:
      backend.searchFacts || backend.countFacts ? new PushedDownFactStore(facts, backend, partitions) : facts,
    documents: new PartitionedDocumentStore({ ...common, ...chunking }),
    plans: new PartitionedPlanStore(common),
    working: new PartitionedWorkingMemoryStore({ ...options.working, ...common }),
    sessions: new PartitionedSessionStore({ ...options.sessions, ...common }),
    details: new PartitionedDetailStore({
      ...common,
      ...(options.tokenizer ? { tokenizer: options.tokenizer } : {}),
    }),
    setup: async () => backend.setup?.(),
    close: once(async () => backend.close?.()),
  };
}

/**
 * Fact search and count answered by the backend's push-downs, unless this process holds the partition
 * decoded at its current version (after a `list`, an `update`…): then in memory, as the answers are the
 * same. Everything else by the stores above.
 */
class PushedDownFactStore extends DelegatingFactStore {
  readonly #backend: StorageBackend;
  readonly #partitions: RecordBackedPartitions;

  constructor(store: FactStore, backend: StorageBackend, partitions: RecordBackedPartitions) {
    super(store);
    this.#backend = backend;
    this.#partitions = partitions;
  }

  override async search(scope: Scope, query: FactQuery): Promise<FactHit[]> {
    const s = parseScope(scope);
    if (!this.#backend.searchFacts || (await this.#decoded(s))) return super.search(scope, query);
    return this.#backend.searchFacts(s, parseOrThrow(FactQuerySchema, query, 'fact query'));
  }

  override async count(scope: Scope, filter: FactFilter = {}): Promise<number> {
    const s = parseScope(scope);
    if (!this.#backend.countFacts || (await this.#decoded(s))) return super.count(scope, filter);
    return this.#backend.countFacts(s, parseOrThrow(FactFilterSchema, filter, 'count filter'));
  }

  #decoded(scope: Scope): Promise<boolean> {
    return this.#partitions.isCurrent({ kind: 'facts', userId: scope.userId, agentId: scope.agentId });
  }
}
