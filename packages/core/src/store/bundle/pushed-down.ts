import { parseScope, type Scope } from '../../foundation/scope.js';
import { parseOrThrow } from '../../foundation/validation.js';
import type { Tokenizer } from '../../tokens/tokenizer.js';
import type { PartitionRef } from '../backend/partition.js';
import type { RecordBackedPartitions } from '../backend/record-backend.js';
import { PartitionedDetailStore } from '../details/partitioned.js';
import { type DetailHit, type DetailQuery, DetailQuerySchema } from '../details/record.js';
import { PartitionedDocumentStore, type PartitionedDocumentStoreOptions } from '../documents/partitioned.js';
import { type DocumentChunkHit, type DocumentQuery, DocumentQuerySchema } from '../documents/record.js';
import { DelegatingFactStore } from '../facts/delegating.js';
import {
  type FactFilter,
  FactFilterSchema,
  type FactHit,
  type FactQuery,
  FactQuerySchema,
} from '../facts/record.js';
import type { FactStore } from '../facts/store.js';
import type { StorageBackend } from './storage-backend.js';

/**
 * Fact search and count answered by the backend's push-downs, unless this process holds the partition
 * decoded at its current version (after a `list`, an `update`…): then in memory, as the answers are the
 * same. Everything else by the stores above.
 */
export class PushedDownFactStore extends DelegatingFactStore {
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
    const ref: PartitionRef = { kind: 'facts', userId: scope.userId, agentId: scope.agentId };
    return decoded(this.#backend, this.#partitions, ref);
  }
}

/**
 * Document search answered by the backend's push-down, unless this process holds the partition decoded at
 * its current version: then in memory (same answers). Everything else as `PartitionedDocumentStore`.
 */
export class PushedDownDocumentStore extends PartitionedDocumentStore {
  readonly #backend: StorageBackend;
  readonly #partitions: RecordBackedPartitions;

  constructor(
    options: PartitionedDocumentStoreOptions,
    backend: StorageBackend,
    partitions: RecordBackedPartitions,
  ) {
    super(options);
    this.#backend = backend;
    this.#partitions = partitions;
  }

  override async search(scope: Scope, query: DocumentQuery): Promise<DocumentChunkHit[]> {
    const s = parseScope(scope);
    const ref: PartitionRef = { kind: 'documents', userId: s.userId, agentId: s.agentId };
    if (!this.#backend.searchDocuments || (await decoded(this.#backend, this.#partitions, ref)))
      return super.search(scope, query);
    return this.#backend.searchDocuments(s, parseOrThrow(DocumentQuerySchema, query, 'document query'));
  }
}

/** Detail search answered by the backend's push-down, unless the partition is decoded (as above). */
export class PushedDownDetailStore extends PartitionedDetailStore {
  readonly #backend: StorageBackend;
  readonly #partitions: RecordBackedPartitions;

  constructor(
    options: ConstructorParameters<typeof PartitionedDetailStore>[0] & { tokenizer?: Tokenizer },
    backend: StorageBackend,
    partitions: RecordBackedPartitions,
  ) {
    super(options);
    this.#backend = backend;
    this.#partitions = partitions;
  }

  override async search(scope: Scope, query: DetailQuery): Promise<DetailHit[]> {
    const s = parseScope(scope);
    const ref: PartitionRef = { kind: 'details', userId: s.userId };
    if (!this.#backend.searchDetails || (await decoded(this.#backend, this.#partitions, ref)))
      return super.search(scope, query);
    return this.#backend.searchDetails(s, parseOrThrow(DetailQuerySchema, query, 'detail query'));
  }
}

/** Whether to answer in memory: the partition is decoded at its current version and ranked as core ranks. */
async function decoded(
  backend: StorageBackend,
  partitions: RecordBackedPartitions,
  ref: PartitionRef,
): Promise<boolean> {
  return !backend.ownRanking && (await partitions.isCurrent(ref));
}
