import type { KnowledgeDocument, Scope } from '@kioku/core';
import {
  combineKnowledge,
  type DocumentChunking,
  type DocumentChunkingOptions,
  documentChunking,
  documentExistsError,
  isoAt,
  newDocument,
  parseKnowledgeBudget,
  parseOrThrow,
  parseScope,
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
import type Database from 'better-sqlite3';
import { and, asc, eq, inArray, type SQL, sql } from 'drizzle-orm';
import { analyze, chunkText } from './analysis.js';
import { agentColumn, agentOf, SqliteStoreBase, type SqliteStoreOptions } from './base.js';
import { hasAllTags } from './filters.js';
import { documentChunks, documents } from './schema.js';
import { scopeToken } from './search.js';

export interface SqliteDocumentStoreOptions extends SqliteStoreOptions, DocumentChunkingOptions {}

type DocumentRow = typeof documents.$inferSelect;
type ChunkRow = typeof documentChunks.$inferSelect;

function toDocument(row: DocumentRow, chunks: ChunkRow[]): KnowledgeDocument {
  const doc: KnowledgeDocument = {
    id: row.id,
    userId: row.userId,
    title: row.title,
    tags: row.tags,
    source: row.source as KnowledgeDocument['source'],
    text: row.text,
    tokenCount: row.tokenCount,
    chunks: chunks
      .sort((a, b) => a.chunkIndex - b.chunkIndex)
      .map((c) => ({ index: c.chunkIndex, text: c.text, tokenCount: c.tokenCount })),
    metadata: row.metadata,
    addedAt: row.addedAt,
  };
  const agentId = agentOf(row.agentId);
  if (agentId !== undefined) doc.agentId = agentId;
  if (row.description !== null) doc.description = row.description;
  return doc;
}

const inPartition = (scope: Scope): SQL =>
  and(eq(documents.userId, scope.userId), eq(documents.agentId, agentColumn(scope.agentId)))!;

/**
 * Knowledge documents in `kioku_documents`, their chunks in `kioku_document_chunks` (one row each,
 * searched with FTS5 together with the document's title and tags).
 */
export class SqliteDocumentStore extends SqliteStoreBase implements DocumentStore {
  readonly #chunking: DocumentChunking;
  /**
   * The partition's change counter, kept by the chunk and document triggers (migrations 0004, 0010);
   * prepared on first use, once the schema is there.
   */
  #partitionChanges: Database.Statement | undefined;

  constructor(options: SqliteDocumentStoreOptions) {
    super(options);
    this.#chunking = documentChunking(options);
  }

  async create(scope: Scope, input: DocumentInput): Promise<KnowledgeDocument> {
    const s = parseScope(scope);
    const doc = newDocument(s, input, this.#chunking, isoAt(this.clock));
    this.write(() => {
      if (!this.#insert(doc)) throw documentExistsError(doc.id);
    });
    return doc;
  }

  async get(scope: Scope, id: string): Promise<KnowledgeDocument | null> {
    const s = parseScope(scope);
    parseOrThrow(IdSchema, id, 'document id');
    return this.read(() => this.#load(and(inPartition(s), eq(documents.id, id))!)[0] ?? null);
  }

  async list(scope: Scope): Promise<KnowledgeDocument[]> {
    const s = parseScope(scope);
    return this.read(() => this.#load(inPartition(s)));
  }

  /**
   * Changes with every write to the partition's documents, from this connection or another: the knowledge
   * block is reused while it is the same, without reading the documents.
   */
  async revision(scope: Scope): Promise<string> {
    const s = parseScope(scope);
    const changes = this.readOne(() => {
      this.#partitionChanges ??= this.connection.raw
        .prepare(
          "SELECT changes FROM kioku_search_stats WHERE table_name = 'kioku_document_chunks' AND scope = ?",
        )
        .pluck();
      return this.#partitionChanges.get(scopeToken(s.userId, agentColumn(s.agentId)));
    }) as number | undefined;
    return String(changes ?? 0);
  }

  async delete(scope: Scope, id: string): Promise<boolean> {
    const s = parseScope(scope);
    parseOrThrow(IdSchema, id, 'document id');
    return this.write(() => {
      const row = this.orm
        .select({ seq: documents.seq })
        .from(documents)
        .where(and(inPartition(s), eq(documents.id, id)))
        .get();
      if (!row) return false;
      this.#deleteSeqs([row.seq]);
      return true;
    });
  }

  async search(scope: Scope, query: DocumentQuery): Promise<DocumentChunkHit[]> {
    const s = parseScope(scope);
    const q = parseOrThrow(DocumentQuerySchema, query, 'document query');
    const tags = hasAllTags(documents.tags, q.tags);
    const where =
      tags &&
      sql`EXISTS (SELECT 1 FROM ${documents} WHERE ${documents.seq} = ${documentChunks.documentSeq} AND ${tags})`;
    return this.read(() => {
      const target = { table: documentChunks, scope: scopeToken(s.userId, agentColumn(s.agentId)), where };
      const ranked = this.lexical.search(target, q.query, q.limit);
      if (ranked.length === 0) return [];
      const rows = this.orm
        .select({ chunk: documentChunks, documentId: documents.id, title: documents.title })
        .from(documentChunks)
        .innerJoin(documents, eq(documents.seq, documentChunks.documentSeq))
        .where(
          inArray(
            documentChunks.seq,
            ranked.map((r) => r.seq),
          ),
        )
        .all();
      // The partition is checked here: in SQL it would tempt SQLite to scan the partition's index.
      const mine = rows.filter(
        (row) => row.chunk.userId === s.userId && row.chunk.agentId === agentColumn(s.agentId),
      );
      const bySeq = new Map(mine.map((row) => [row.chunk.seq, row]));
      return ranked.flatMap((r) => {
        const row = bySeq.get(r.seq);
        if (!row) return [];
        return {
          documentId: row.documentId,
          title: row.title,
          chunk: { index: row.chunk.chunkIndex, text: row.chunk.text, tokenCount: row.chunk.tokenCount },
          score: r.score,
        };
      });
    });
  }

  async combinedText(scope: Scope, maxTokens: number): Promise<CombinedKnowledge> {
    const s = parseScope(scope);
    const budget = parseKnowledgeBudget(maxTokens);
    const docs = this.read(() =>
      this.orm
        .select({ id: documents.id, title: documents.title, text: documents.text })
        .from(documents)
        .where(inPartition(s))
        .orderBy(asc(documents.seq))
        .all(),
    );
    return combineKnowledge(docs, budget, this.#chunking.tokenizer);
  }

  async eraseUser(userId: string): Promise<string[]> {
    return this.eraseAll(userId, () => {
      const rows = this.orm
        .select({ seq: documents.seq, id: documents.id })
        .from(documents)
        .where(eq(documents.userId, userId))
        .all();
      this.#deleteSeqs(rows.map((r) => r.seq));
      return rows.map((r) => r.id);
    });
  }

  async snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<KnowledgeDocument>> {
    return this.snapshotOf('documents', selector, (userId) =>
      this.#load(userId === undefined ? undefined : eq(documents.userId, userId), true),
    );
  }

  async restore(snapshot: unknown, options: RestoreOptions = {}): Promise<RestoreReport> {
    return this.restoreFrom('documents', KnowledgeDocumentSchema, snapshot, options, {
      userIdOf: (d) => d.userId,
      partitionOf: (d) => `${d.userId}/${agentColumn(d.agentId)}`,
      idOf: (d) => d.id,
      replace: (records) => {
        const old = this.orm
          .select({ seq: documents.seq })
          .from(documents)
          .where(inPartition(records[0]!))
          .all();
        this.#deleteSeqs(old.map((r) => r.seq));
        for (const doc of records) this.#insert(doc);
      },
    });
  }

  /** Insert a document and its chunks; false when its id exists in the partition. */
  #insert(doc: KnowledgeDocument): boolean {
    const [row] = this.orm
      .insert(documents)
      .values({
        userId: doc.userId,
        agentId: agentColumn(doc.agentId),
        id: doc.id,
        title: doc.title,
        description: doc.description ?? null,
        tags: doc.tags,
        source: doc.source,
        text: doc.text,
        tokenCount: doc.tokenCount,
        metadata: doc.metadata,
        addedAt: doc.addedAt,
      })
      .onConflictDoNothing()
      .returning({ seq: documents.seq })
      .all();
    if (!row) return false;
    for (const chunk of doc.chunks) {
      const search = analyze(chunkText(doc, chunk.text));
      this.orm
        .insert(documentChunks)
        .values({
          documentSeq: row.seq,
          userId: doc.userId,
          agentId: agentColumn(doc.agentId),
          chunkIndex: chunk.index,
          text: chunk.text,
          tokenCount: chunk.tokenCount,
          searchTerms: search.terms,
          searchLength: search.length,
        })
        .run();
    }
    return true;
  }

  #deleteSeqs(seqs: number[]): void {
    if (seqs.length === 0) return;
    // Chunks first: the foreign key cascades only where the connection enables foreign keys.
    this.orm.delete(documentChunks).where(inArray(documentChunks.documentSeq, seqs)).run();
    this.orm.delete(documents).where(inArray(documents.seq, seqs)).run();
  }

  /** Documents matching `where` with their chunks, in insertion order (by partition first for snapshots). */
  #load(where: SQL | undefined, byPartition = false): KnowledgeDocument[] {
    const rows = this.orm
      .select()
      .from(documents)
      .where(where)
      .orderBy(...(byPartition ? [asc(documents.userId), asc(documents.agentId)] : []), asc(documents.seq))
      .all();
    if (rows.length === 0) return [];
    const chunks = new Map<number, ChunkRow[]>();
    const owners = this.orm.select({ seq: documents.seq }).from(documents).where(where);
    for (const chunk of this.orm
      .select()
      .from(documentChunks)
      .where(inArray(documentChunks.documentSeq, owners))
      .all()) {
      const list = chunks.get(chunk.documentSeq) ?? [];
      list.push(chunk);
      chunks.set(chunk.documentSeq, list);
    }
    return rows.map((row) => toDocument(row, chunks.get(row.seq) ?? []));
  }
}
