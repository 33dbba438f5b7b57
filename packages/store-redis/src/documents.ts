import {
  type CombinedKnowledge,
  chunkText,
  type DocumentChunkHit,
  type DocumentInput,
  DocumentInputSchema,
  type DocumentQuery,
  DocumentQuerySchema,
  type DocumentStore,
  defaultTokenizer,
  hasAllTags,
  IdSchema,
  isoAt,
  type KnowledgeDocument,
  KnowledgeDocumentSchema,
  parseOrThrow,
  parseScope,
  type RestoreOptions,
  type RestoreReport,
  type Scope,
  type SnapshotEnvelope,
  type SnapshotSelector,
  shortId,
  type Tokenizer,
} from '@kioku/core';
import { z } from 'zod';
import { RedisStoreBase, type RedisStoreOptions } from './base.js';
import type { RedisSearchOptions } from './facts.js';
import { NO_AGENT } from './keys.js';
import { PartitionCache, type PartitionKeys, partitionKeys, RecordPartitions } from './records.js';

export type RedisDocumentStoreOptions = RedisStoreOptions &
  RedisSearchOptions & {
    tokenizer?: Tokenizer;
    /** Maximum tokens per chunk (default 300). */
    chunkTokens?: number;
  };

const CHUNK_KEY_SEPARATOR = '#';
const MaxTokensSchema = z.number().int().min(0).max(10_000_000);

/**
 * Knowledge documents in one HASH per user + agent, each with its chunks; search ranks chunks (indexed
 * with their document's title and tags, as in core) with core's LexicalIndex over the cached partition.
 */
export class RedisDocumentStore extends RedisStoreBase implements DocumentStore {
  readonly #records: RecordPartitions<KnowledgeDocument>;
  readonly #cache: PartitionCache<KnowledgeDocument>;
  readonly #tokenizer: Tokenizer;
  readonly #chunkTokens: number;

  constructor(options: RedisDocumentStoreOptions) {
    super(options);
    this.#tokenizer = options.tokenizer ?? defaultTokenizer;
    this.#chunkTokens = options.chunkTokens ?? 300;
    this.#records = new RecordPartitions<KnowledgeDocument>(this.connection, {
      name: 'document',
      indexEntries: (doc) =>
        doc.chunks.map((chunk) => ({
          key: `${doc.id}${CHUNK_KEY_SEPARATOR}${chunk.index}`,
          text: `${doc.title}\n${doc.tags.join(' ')}\n${chunk.text}`,
        })),
      ...(options.search ? { search: options.search } : {}),
    });
    this.#cache = new PartitionCache(this.#records, (d) => d.id, options.cache);
  }

  async add(scope: Scope, input: DocumentInput): Promise<KnowledgeDocument> {
    const s = parseScope(scope);
    const data = parseOrThrow(DocumentInputSchema, input, 'document');
    const doc = parseOrThrow(
      KnowledgeDocumentSchema,
      {
        ...data,
        id: data.id ?? shortId(),
        userId: s.userId,
        agentId: s.agentId,
        tokenCount: this.#tokenizer.count(data.text),
        chunks: chunkText(data.text, this.#tokenizer, this.#chunkTokens),
        addedAt: isoAt(this.clock),
      },
      'document',
    );
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

  async remove(scope: Scope, id: string): Promise<boolean> {
    const keys = this.#keysFor(parseScope(scope));
    parseOrThrow(IdSchema, id, 'document id');
    return this.#records.delete(keys, id);
  }

  async search(scope: Scope, query: DocumentQuery): Promise<DocumentChunkHit[]> {
    const keys = this.#keysFor(parseScope(scope));
    const q = parseOrThrow(DocumentQuerySchema, query, 'document query');
    const partition = await this.#cache.current(keys);
    const docOf = (key: string) => partition.get(key.slice(0, key.lastIndexOf(CHUNK_KEY_SEPARATOR)))!;
    const filter = q.tags?.length ? (key: string) => hasAllTags(docOf(key).tags, q.tags) : undefined;
    return partition
      .index()
      .search(q.query, { limit: q.limit, filter })
      .map((hit) => {
        const doc = docOf(hit.id);
        const chunkIndex = Number(hit.id.slice(hit.id.lastIndexOf(CHUNK_KEY_SEPARATOR) + 1));
        return { documentId: doc.id, title: doc.title, chunk: doc.chunks[chunkIndex]!, score: hit.score };
      });
  }

  async combinedText(scope: Scope, maxTokens: number): Promise<CombinedKnowledge> {
    const keys = this.#keysFor(parseScope(scope));
    const budget = parseOrThrow(MaxTokensSchema, maxTokens, 'maxTokens');
    const partition = await this.#cache.current(keys);
    const sections: string[] = [];
    const documentIds: string[] = [];
    let used = 0;
    let truncated = false;
    for (const doc of partition.ordered()) {
      const section = `${sections.length ? '\n\n' : ''}## ${doc.title}\n${doc.text}`;
      const tokens = this.#tokenizer.count(section);
      if (used + tokens <= budget) {
        sections.push(section);
        documentIds.push(doc.id);
        used += tokens;
        continue;
      }
      truncated = true;
      const cut = this.#tokenizer.truncate(section, budget - used);
      if (cut.trim()) {
        sections.push(cut);
        documentIds.push(doc.id);
        used += this.#tokenizer.count(cut);
      }
      break;
    }
    return { text: sections.join(''), tokenCount: used, documentIds, truncated };
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
