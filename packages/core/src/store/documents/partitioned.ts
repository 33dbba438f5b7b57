import { type Clock, isoAt, systemClock } from '../../foundation/clock.js';
import { IdSchema } from '../../foundation/ids.js';
import { parseScope, type Scope, type SnapshotSelector } from '../../foundation/scope.js';
import { parseOrThrow } from '../../foundation/validation.js';
import type { PartitionBackend, PartitionRef } from '../backend/partition.js';
import { type RecordPartition, recordPartitionCodec } from '../backend/record-partition.js';
import {
  erasePartitions,
  groupByPartition,
  restorePartitions,
  type SnapshotMapping,
  snapshotPartitions,
} from '../backend/snapshot-io.js';
import type { RestoreOptions, RestoreReport, SnapshotEnvelope } from '../snapshot/envelope.js';
import { combineKnowledge, parseKnowledgeBudget } from './combine.js';
import {
  type CombinedKnowledge,
  type DocumentChunkHit,
  type DocumentInput,
  type DocumentQuery,
  DocumentQuerySchema,
  type KnowledgeDocument,
  KnowledgeDocumentSchema,
} from './record.js';
import { documentRecordsCodec } from './records.js';
import {
  chunkIndexEntries,
  type DocumentChunking,
  type DocumentChunkingOptions,
  documentChunking,
  documentExistsError,
  newDocument,
  searchChunks,
} from './rules.js';
import type { DocumentStore } from './store.js';

export interface PartitionedDocumentStoreOptions extends DocumentChunkingOptions {
  backend: PartitionBackend;
  clock?: Clock;
}

const documentCodec = documentRecordsCodec(
  recordPartitionCodec<KnowledgeDocument>('documents', KnowledgeDocumentSchema, {
    idOf: (doc) => doc.id,
    indexEntries: chunkIndexEntries,
  }),
);

function refFor(scope: Scope): PartitionRef {
  return { kind: 'documents', userId: scope.userId, agentId: scope.agentId };
}

const documentMapping: SnapshotMapping<KnowledgeDocument, RecordPartition<KnowledgeDocument>> = {
  kind: 'documents',
  recordSchema: KnowledgeDocumentSchema,
  codec: documentCodec,
  recordsOf: (state) => [...state.records.values()],
  userIdOf: (doc) => doc.userId,
  toPartitions: (docs) =>
    groupByPartition(
      docs,
      (d) => refFor(d),
      (d) => d.id,
    ).map(({ ref, records }) => {
      const state = documentCodec.empty();
      for (const doc of records) state.put(doc);
      return { ref, state };
    }),
};

/** DocumentStore over any PartitionBackend: one partition per user + agent. */
export class PartitionedDocumentStore implements DocumentStore {
  readonly #backend: PartitionBackend;
  readonly #clock: Clock;
  readonly #chunking: DocumentChunking;

  constructor(options: PartitionedDocumentStoreOptions) {
    this.#backend = options.backend;
    this.#clock = options.clock ?? systemClock;
    this.#chunking = documentChunking(options);
  }

  async create(scope: Scope, input: DocumentInput): Promise<KnowledgeDocument> {
    const parsedScope = parseScope(scope);
    const doc = newDocument(parsedScope, input, this.#chunking, isoAt(this.#clock));
    return this.#backend.write(refFor(parsedScope), documentCodec, (state) => {
      if (state.get(doc.id)) throw documentExistsError(doc.id);
      state.put(doc);
      return doc;
    });
  }

  async get(scope: Scope, id: string): Promise<KnowledgeDocument | null> {
    const ref = refFor(parseScope(scope));
    parseOrThrow(IdSchema, id, 'document id');
    return (await this.#backend.read(ref, documentCodec)).get(id) ?? null;
  }

  async list(scope: Scope): Promise<KnowledgeDocument[]> {
    const state = await this.#backend.read(refFor(parseScope(scope)), documentCodec);
    return [...state.records.values()];
  }

  async revision(scope: Scope): Promise<string> {
    const ref = refFor(parseScope(scope));
    if (this.#backend.revision) return this.#backend.revision(ref);
    return (await this.#backend.read(ref, documentCodec)).revision;
  }

  async delete(scope: Scope, id: string): Promise<boolean> {
    const ref = refFor(parseScope(scope));
    parseOrThrow(IdSchema, id, 'document id');
    return this.#backend.write(ref, documentCodec, (state) => state.delete(id) !== undefined);
  }

  async search(scope: Scope, query: DocumentQuery): Promise<DocumentChunkHit[]> {
    const ref = refFor(parseScope(scope));
    const q = parseOrThrow(DocumentQuerySchema, query, 'document query');
    return searchChunks(await this.#backend.read(ref, documentCodec), q);
  }

  async combinedText(scope: Scope, maxTokens: number): Promise<CombinedKnowledge> {
    const ref = refFor(parseScope(scope));
    const budget = parseKnowledgeBudget(maxTokens);
    const state = await this.#backend.read(ref, documentCodec);
    return combineKnowledge(state.records.values(), budget, this.#chunking.tokenizer);
  }

  snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<KnowledgeDocument>> {
    return snapshotPartitions(this.#backend, documentMapping, selector, this.#clock);
  }

  eraseUser(userId: string): Promise<string[]> {
    return erasePartitions(this.#backend, documentMapping, userId, (d) => d.id);
  }

  restore(snapshot: unknown, options?: RestoreOptions): Promise<RestoreReport> {
    return restorePartitions(this.#backend, documentMapping, snapshot, options);
  }
}
