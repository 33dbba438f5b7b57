import { z } from 'zod';
import type { PartitionBackend, PartitionRef } from '../backend/partition.js';
import { type RecordPartition, recordPartitionCodec } from '../backend/record-partition.js';
import {
  groupByPartition,
  restorePartitions,
  type SnapshotMapping,
  snapshotPartitions,
} from '../backend/snapshot-io.js';
import { type Clock, isoAt, systemClock } from '../clock.js';
import { ConflictError } from '../errors.js';
import { IdSchema, shortId } from '../ids.js';
import { hasAllTags } from '../records/common.js';
import { parseScope, type Scope, type SnapshotSelector } from '../scope.js';
import type { RestoreOptions, RestoreReport, SnapshotEnvelope } from '../snapshot/envelope.js';
import { defaultTokenizer, type Tokenizer } from '../tokenizer.js';
import { parseOrThrow } from '../validation.js';
import { chunkText } from './chunker.js';
import {
  type CombinedKnowledge,
  type DocumentChunkHit,
  type DocumentInput,
  DocumentInputSchema,
  type DocumentQuery,
  DocumentQuerySchema,
  type KnowledgeDocument,
  KnowledgeDocumentSchema,
} from './record.js';
import type { DocumentStore } from './store.js';

export interface PartitionedDocumentStoreOptions {
  backend: PartitionBackend;
  clock?: Clock;
  tokenizer?: Tokenizer;
  /** Maximum tokens per chunk (default 300). */
  chunkTokens?: number;
}

const CHUNK_KEY_SEPARATOR = '#';

const documentCodec = recordPartitionCodec<KnowledgeDocument>('documents', KnowledgeDocumentSchema, {
  idOf: (doc) => doc.id,
  // Each chunk is indexed with its document's title so a chunk is found by what the document is about.
  indexEntries: (doc) =>
    doc.chunks.map((chunk) => ({
      key: `${doc.id}${CHUNK_KEY_SEPARATOR}${chunk.index}`,
      text: `${doc.title}\n${doc.tags.join(' ')}\n${chunk.text}`,
    })),
});

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

const MaxTokensSchema = z.number().int().min(0).max(10_000_000);

/** DocumentStore over any PartitionBackend: one partition per user + agent. */
export class PartitionedDocumentStore implements DocumentStore {
  readonly #backend: PartitionBackend;
  readonly #clock: Clock;
  readonly #tokenizer: Tokenizer;
  readonly #chunkTokens: number;

  constructor(options: PartitionedDocumentStoreOptions) {
    this.#backend = options.backend;
    this.#clock = options.clock ?? systemClock;
    this.#tokenizer = options.tokenizer ?? defaultTokenizer;
    this.#chunkTokens = options.chunkTokens ?? 300;
  }

  async add(scope: Scope, input: DocumentInput): Promise<KnowledgeDocument> {
    const parsedScope = parseScope(scope);
    const data = parseOrThrow(DocumentInputSchema, input, 'document');
    const doc = parseOrThrow(
      KnowledgeDocumentSchema,
      {
        ...data,
        id: data.id ?? shortId(),
        userId: parsedScope.userId,
        agentId: parsedScope.agentId,
        tokenCount: this.#tokenizer.count(data.text),
        chunks: chunkText(data.text, this.#tokenizer, this.#chunkTokens),
        addedAt: isoAt(this.#clock),
      },
      'document',
    );
    return this.#backend.write(refFor(parsedScope), documentCodec, (state) => {
      if (state.get(doc.id)) throw new ConflictError(`A document with id "${doc.id}" already exists.`);
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

  async remove(scope: Scope, id: string): Promise<boolean> {
    const ref = refFor(parseScope(scope));
    parseOrThrow(IdSchema, id, 'document id');
    return this.#backend.write(ref, documentCodec, (state) => state.delete(id) !== undefined);
  }

  async search(scope: Scope, query: DocumentQuery): Promise<DocumentChunkHit[]> {
    const ref = refFor(parseScope(scope));
    const q = parseOrThrow(DocumentQuerySchema, query, 'document query');
    const state = await this.#backend.read(ref, documentCodec);
    const docOf = (key: string) => state.get(key.slice(0, key.lastIndexOf(CHUNK_KEY_SEPARATOR)))!;
    const filter = q.tags?.length ? (key: string) => hasAllTags(docOf(key).tags, q.tags) : undefined;
    return state
      .index()
      .search(q.query, { limit: q.limit, filter })
      .map((hit) => {
        const doc = docOf(hit.id);
        const chunkIndex = Number(hit.id.slice(hit.id.lastIndexOf(CHUNK_KEY_SEPARATOR) + 1));
        return { documentId: doc.id, title: doc.title, chunk: doc.chunks[chunkIndex]!, score: hit.score };
      });
  }

  async combinedText(scope: Scope, maxTokens: number): Promise<CombinedKnowledge> {
    const ref = refFor(parseScope(scope));
    const budget = parseOrThrow(MaxTokensSchema, maxTokens, 'maxTokens');
    const state = await this.#backend.read(ref, documentCodec);
    const sections: string[] = [];
    const documentIds: string[] = [];
    let used = 0;
    let truncated = false;
    for (const doc of state.records.values()) {
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

  snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<KnowledgeDocument>> {
    return snapshotPartitions(this.#backend, documentMapping, selector, this.#clock);
  }

  restore(snapshot: unknown, options?: RestoreOptions): Promise<RestoreReport> {
    return restorePartitions(this.#backend, documentMapping, snapshot, options);
  }
}
