import { hasAllTags } from '../../foundation/record-fields.js';
import { parseScope, type Scope, type SnapshotSelector } from '../../foundation/scope.js';
import { parseOrThrow } from '../../foundation/validation.js';
import type {
  CombinedKnowledge,
  DocumentChunkHit,
  DocumentInput,
  DocumentQuery,
  KnowledgeDocument,
} from '../documents/record.js';
import { DocumentQuerySchema } from '../documents/record.js';
import type { DocumentStore } from '../documents/store.js';
import type { ErasureResidue } from '../erasure-residue.js';
import type { RestoreOptions, RestoreReport, SnapshotEnvelope } from '../snapshot/envelope.js';
import { reciprocalRankFusion } from './fusion.js';
import { chunkVectorId, documentMapping } from './kinds.js';
import { type ReindexReport, reindexRecords } from './reindex.js';
import { type HybridOptions, VectorSide } from './vector-side.js';

const indexScope = (scope: Scope): Scope =>
  scope.agentId === undefined ? { userId: scope.userId } : { userId: scope.userId, agentId: scope.agentId };

const chunkKey = (documentId: string, chunk: number) => `${documentId}#${chunk}`;

/**
 * A DocumentStore with a vector per chunk, kept in sync on create, delete and restore, whose `search`
 * fuses the store's lexical chunk hits with the nearest chunk vectors (reciprocal rank fusion). The
 * same guarantees as {@link HybridFactStore}: the store is the source of truth, hits are read back from
 * it, stale vectors are dropped when found.
 */
export class HybridDocumentStore implements DocumentStore {
  readonly store: DocumentStore;
  readonly vectors: VectorSide;
  /** The wrapped store's, when it has one (every write goes through to it). */
  readonly revision?: (scope: Scope) => Promise<string>;

  constructor(
    store: DocumentStore,
    options: HybridOptions & { embedder: NonNullable<HybridOptions['embedder']> },
  ) {
    this.store = store;
    this.vectors = new VectorSide('documents', options.embedder, options);
    const revision = store.revision;
    if (revision) this.revision = (scope) => revision.call(store, scope);
  }

  get(scope: Scope, id: string): Promise<KnowledgeDocument | null> {
    return this.store.get(scope, id);
  }

  list(scope: Scope): Promise<KnowledgeDocument[]> {
    return this.store.list(scope);
  }

  combinedText(scope: Scope, maxTokens: number): Promise<CombinedKnowledge> {
    return this.store.combinedText(scope, maxTokens);
  }

  /** The records only: `forgetUser` erases the user's vectors from the index once, for every kind. */
  eraseUser(userId: string): Promise<string[]> {
    return this.store.eraseUser(userId);
  }

  /** The wrapped store's derived places (the vector index is checked by `verifyErased` itself). */
  erasureResidue(userId: string): Promise<ErasureResidue[]> {
    return this.store.erasureResidue?.(userId) ?? Promise.resolve([]);
  }

  snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<KnowledgeDocument>> {
    return this.store.snapshot(selector);
  }

  async create(scope: Scope, input: DocumentInput): Promise<KnowledgeDocument> {
    const s = indexScope(parseScope(scope));
    await this.vectors.ensureModel(s);
    const doc = await this.store.create(scope, input);
    await this.vectors.write(s, documentMapping.entriesOf(doc));
    return doc;
  }

  async delete(scope: Scope, id: string): Promise<boolean> {
    const s = indexScope(parseScope(scope));
    const doc = await this.store.get(scope, id);
    const removed = await this.store.delete(scope, id);
    if (doc) {
      await this.vectors.remove(
        s,
        doc.chunks.map((c) => chunkVectorId(doc.id, c.index)),
      );
    }
    return removed;
  }

  async search(scope: Scope, query: DocumentQuery): Promise<DocumentChunkHit[]> {
    const s = parseScope(scope);
    const q = parseOrThrow(DocumentQuerySchema, query, 'document query');
    const pool = this.vectors.candidates(q.limit);
    const [lexical, nearest] = await Promise.all([
      this.store.search(scope, { ...q, limit: pool }),
      this.vectors.search(indexScope(s), q.query, pool),
    ]);
    const docs = new Map<string, KnowledgeDocument | null>();
    const vectorHits: DocumentChunkHit[] = [];
    const gone: string[] = [];
    for (const hit of nearest) {
      const { documentId, chunk } = hit.payload;
      if (typeof documentId !== 'string' || typeof chunk !== 'number') {
        gone.push(hit.id);
        continue;
      }
      if (!docs.has(documentId)) docs.set(documentId, await this.store.get(scope, documentId));
      const doc = docs.get(documentId);
      const found = doc?.chunks[chunk];
      if (!doc || !found) {
        gone.push(hit.id);
        continue;
      }
      if (!hasAllTags(doc.tags, q.tags)) continue;
      vectorHits.push({ documentId, title: doc.title, chunk: found, score: hit.score });
    }
    await this.vectors.forget(indexScope(s), gone);
    const ranked = (hits: DocumentChunkHit[]) =>
      hits.map((hit) => ({ key: chunkKey(hit.documentId, hit.chunk.index), item: hit }));
    return reciprocalRankFusion([ranked(lexical), ranked(vectorHits)], this.vectors.fusion)
      .slice(0, q.limit)
      .map(({ item, score }) => ({ ...item, score }));
  }

  /** Restores the store, then rebuilds the vectors of every partition the snapshot contains. */
  async restore(snapshot: unknown, options?: RestoreOptions): Promise<RestoreReport> {
    const report = await this.store.restore(snapshot, options);
    await reindexRecords(
      this.vectors,
      documentMapping,
      (snapshot as SnapshotEnvelope<KnowledgeDocument>).records,
    );
    return report;
  }

  reindex(docs: readonly KnowledgeDocument[], options?: { signal?: AbortSignal }): Promise<ReindexReport> {
    return reindexRecords(this.vectors, documentMapping, docs, options);
  }
}

/** Hybrid chunk retrieval: a {@link HybridDocumentStore} with an embedder, `store` itself without one. */
export function withDocumentEmbeddings(store: DocumentStore, options: HybridOptions): DocumentStore {
  const { embedder } = options;
  return embedder ? new HybridDocumentStore(store, { ...options, embedder }) : store;
}
