import type { KnowledgeDocument, Scope } from '@kioku/core';
import {
  chunkIndexEntries,
  combineKnowledge,
  type DocumentChunking,
  type DocumentChunkingOptions,
  documentChunking,
  isoAt,
  newDocument,
  parseKnowledgeBudget,
  parseOrThrow,
  parseScope,
  searchChunks,
} from '@kioku/core/adapter';
import {
  type CombinedKnowledge,
  type DocumentChunkHit,
  type DocumentInput,
  type DocumentQuery,
  DocumentQuerySchema,
  type DocumentStore,
  IdSchema,
  KnowledgeDocumentSchema,
  type RestoreOptions,
  type RestoreReport,
  type SnapshotEnvelope,
  type SnapshotSelector,
} from '@kioku/core/store';
import { RedisStoreBase, type RedisStoreOptions } from './base.js';
import type { RedisSearchOptions } from './facts.js';
import { NO_AGENT } from './keys.js';
import { PartitionCache, type PartitionKeys, partitionKeys, RecordPartitions } from './records.js';

export type RedisDocumentStoreOptions = RedisStoreOptions & RedisSearchOptions & DocumentChunkingOptions;

/**
 * Knowledge documents in one HASH per user + agent, each with its chunks; search ranks chunks (indexed
 * with their document's title and tags, as in core) with core's LexicalIndex over the cached partition.
 */
export class RedisDocumentStore extends RedisStoreBase implements DocumentStore {
  readonly #records: RecordPartitions<KnowledgeDocument>;
  readonly #cache: PartitionCache<KnowledgeDocument>;
  readonly #chunking: DocumentChunking;

  constructor(options: RedisDocumentStoreOptions) {
    super(options);
    this.#chunking = documentChunking(options);
    this.#records = new RecordPartitions<KnowledgeDocument>(this.connection, {
      name: 'document',
      indexEntries: chunkIndexEntries,
      ...(options.search ? { search: options.search } : {}),
    });
    this.#cache = new PartitionCache(this.#records, (d) => d.id, options.cache);
  }

  async create(scope: Scope, input: DocumentInput): Promise<KnowledgeDocument> {
    const s = parseScope(scope);
    const doc = newDocument(s, input, this.#chunking, isoAt(this.clock));
    await this.#records.insert(this.#keysFor(s), doc.id, doc, 'document');
    return doc;
  }

  async get(scope: Scope, id: string): Promise<KnowledgeDocument | null> {
    const keys = this.#keysFor(parseScope(scope));
    parseOrThrow(IdSchema, id, 'document id');
    return this.#records.get(keys, id);
  }

  async list(scope: Scope): Promise<KnowledgeDocument[]> {
    const partition = await this.#cache.current(this.#keysFor(parseScope(scope)));
    return [...partition.ordered()];
  }

  /** The partition's epoch and change counter, bumped by every write script (see `RecordPartitions.revision`). */
  async revision(scope: Scope): Promise<string> {
    return this.#records.revision(this.#keysFor(parseScope(scope)));
  }

  async delete(scope: Scope, id: string): Promise<boolean> {
    const keys = this.#keysFor(parseScope(scope));
    parseOrThrow(IdSchema, id, 'document id');
    return this.#records.delete(keys, id);
  }

  async search(scope: Scope, query: DocumentQuery): Promise<DocumentChunkHit[]> {
    const keys = this.#keysFor(parseScope(scope));
    const q = parseOrThrow(DocumentQuerySchema, query, 'document query');
    return searchChunks(await this.#cache.current(keys), q);
  }

  async combinedText(scope: Scope, maxTokens: number): Promise<CombinedKnowledge> {
    const keys = this.#keysFor(parseScope(scope));
    const budget = parseKnowledgeBudget(maxTokens);
    const partition = await this.#cache.current(keys);
    return combineKnowledge(partition.ordered(), budget, this.#chunking.tokenizer);
  }

  eraseUser(userId: string): Promise<string[]> {
    return this.eraseKeys('documents', userId, async () =>
      (await this.snapshot({ userId })).records.map((r) => r.id),
    );
  }

  async snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<KnowledgeDocument>> {
    return this.snapshotOf('documents', selector, async (userId) => {
      const records: KnowledgeDocument[] = [];
      for (const found of await this.partitionsOf('documents', ':rec', userId)) {
        const loaded = await this.#records.load(partitionKeys(found.key.slice(0, -':rec'.length)));
        records.push(...loaded.records.map((s) => s.record));
      }
      return records;
    });
  }

  async restore(snapshot: unknown, options: RestoreOptions = {}): Promise<RestoreReport> {
    return this.restoreFrom('documents', KnowledgeDocumentSchema, snapshot, options, {
      userIdOf: (d) => d.userId,
      partitionOf: (d) => `${d.userId}/${d.agentId ?? NO_AGENT}`,
      idOf: (d) => d.id,
      replace: (multi, docs) => this.#records.queueReplace(multi, this.#keysFor(docs[0]!), docs, (d) => d.id),
    });
  }

  #keysFor(scope: Pick<Scope, 'userId' | 'agentId'>): PartitionKeys {
    return partitionKeys(this.keys.base('documents', scope));
  }
}
