import type { KnowledgeDocument, Scope } from '@kioku/core';
import {
  chunkSearchText,
  combineKnowledge,
  type DocumentChunking,
  type DocumentChunkingOptions,
  documentChunking,
  documentExistsError,
  isoAt,
  makeEnvelope,
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
  type ErasureResidue,
  IdSchema,
  KnowledgeDocumentSchema,
  type RestoreOptions,
  type RestoreReport,
  type SnapshotEnvelope,
  type SnapshotSelector,
} from '@kioku/core/store';
import { and, asc, count, desc, eq, getTableColumns, type SQL, sql } from 'drizzle-orm';
import type { Tx } from './database.js';
import { readRevision } from './revision.js';
import { SEARCH_TEXT_CHARS } from './schema.js';
import { groupByPartition, parseSnapshot, selectedUser } from './snapshot.js';
import { agentField, agentKey, batches, hasAllTags, tagKeys, withoutNulls } from './sql.js';
import { PostgresStore, type PostgresStoreOptions } from './store.js';

export interface PostgresDocumentStoreOptions extends PostgresStoreOptions, DocumentChunkingOptions {}

type Partition = { userId: string; agentId?: string | undefined };

/**
 * DocumentStore on PostgreSQL: a row per document in `documents` and a row per chunk in `document_chunks`
 * (with its search vector), partitioned by `(user_id, agent_id)`.
 */
export class PostgresDocumentStore extends PostgresStore implements DocumentStore {
  readonly #chunking: DocumentChunking;

  constructor(options: PostgresDocumentStoreOptions) {
    super(options);
    this.#chunking = documentChunking(options);
  }

  async create(scope: Scope, input: DocumentInput): Promise<KnowledgeDocument> {
    const s = parseScope(scope);
    const doc = newDocument(s, input, this.#chunking, isoAt(this.clock));
    const added = await this.database.transaction(async (tx) => {
      const t = this.tables.documents;
      const inserted = await tx.insert(t).values(toRow(doc)).onConflictDoNothing().returning({ id: t.id });
      if (inserted.length === 0) return false;
      await this.#insertChunks(tx, doc);
      return true;
    });
    if (!added) throw documentExistsError(doc.id);
    return doc;
  }

  async get(scope: Scope, id: string): Promise<KnowledgeDocument | null> {
    const s = parseScope(scope);
    parseOrThrow(IdSchema, id, 'document id');
    const [doc] = await this.#read(and(this.#partition(s), eq(this.tables.documents.id, id)));
    return doc ?? null;
  }

  async list(scope: Scope): Promise<KnowledgeDocument[]> {
    return this.#read(this.#partition(parseScope(scope)));
  }

  /** See `readRevision` (migration 0012). */
  async revision(scope: Scope): Promise<string> {
    return readRevision(this.database, 'document', parseScope(scope));
  }

  async delete(scope: Scope, id: string): Promise<boolean> {
    const s = parseScope(scope);
    parseOrThrow(IdSchema, id, 'document id');
    const t = this.tables.documents;
    // The chunks go with it (ON DELETE CASCADE).
    const rows = await this.database.run((db) =>
      db
        .delete(t)
        .where(and(this.#partition(s), eq(t.id, id)))
        .returning({ id: t.id }),
    );
    return rows.length > 0;
  }

  async search(scope: Scope, query: DocumentQuery): Promise<DocumentChunkHit[]> {
    const s = parseScope(scope);
    const q = parseOrThrow(DocumentQuerySchema, query, 'document query');
    const { documents: d, documentChunks: c } = this.tables;
    const match = await this.match(c.search, q.query);
    if (!match) return [];
    const rows = await this.database.run((db) =>
      db
        .select({
          documentId: c.documentId,
          title: d.title,
          index: c.chunkIndex,
          text: c.text,
          tokenCount: c.tokenCount,
          score: match.score,
        })
        .from(c)
        .innerJoin(d, this.#chunkOf)
        .where(
          and(
            eq(c.userId, s.userId),
            eq(c.agentId, agentKey(s.agentId)),
            match.where,
            hasAllTags(d.tagKeys, q.tags),
          ),
        )
        .orderBy(desc(match.score), asc(d.seq), asc(c.chunkIndex))
        .limit(q.limit),
    );
    return rows.map((r) => ({
      documentId: r.documentId,
      title: r.title,
      chunk: { index: r.index, text: r.text, tokenCount: r.tokenCount },
      score: r.score,
    }));
  }

  async combinedText(scope: Scope, maxTokens: number): Promise<CombinedKnowledge> {
    const s = parseScope(scope);
    const budget = parseKnowledgeBudget(maxTokens);
    const t = this.tables.documents;
    const docs = await this.database.run((db) =>
      db
        .select({ id: t.id, title: t.title, text: t.text })
        .from(t)
        .where(this.#partition(s))
        .orderBy(asc(t.seq)),
    );
    return combineKnowledge(docs, budget, this.#chunking.tokenizer);
  }

  /**
   * One transaction: the documents (the chunks go by the foreign key's cascade), then her revision rows (the
   * triggers have just replaced them; the sequence never hands their values out again).
   */
  async eraseUser(userId: string): Promise<string[]> {
    selectedUser({ userId });
    const { documents: t, documentRevisions } = this.tables;
    const rows = await this.database.transaction(async (tx) => {
      const deleted = await tx.delete(t).where(eq(t.userId, userId)).returning({ id: t.id });
      await tx.delete(documentRevisions).where(eq(documentRevisions.userId, userId));
      return deleted;
    });
    return rows.map((r) => r.id);
  }

  /** The revision rows the triggers derive from `documents`: rows of the user are residue once she has none. */
  async erasureResidue(userId: string): Promise<ErasureResidue[]> {
    selectedUser({ userId });
    const { documentRevisions } = this.tables;
    const [revisions] = await this.database.run((db) =>
      db.select({ n: count() }).from(documentRevisions).where(eq(documentRevisions.userId, userId)),
    );
    return [{ place: 'document_revisions', count: revisions?.n ?? 0 }];
  }

  async snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<KnowledgeDocument>> {
    const { parsed, userId } = selectedUser(selector);
    const docs = await this.#read(
      userId === undefined ? undefined : eq(this.tables.documents.userId, userId),
    );
    return makeEnvelope('documents', parsed, docs, this.clock);
  }

  /** Replaces every (user, agent) partition the snapshot contains, in one transaction. */
  async restore(snapshot: unknown, options: RestoreOptions = {}): Promise<RestoreReport> {
    const records = parseSnapshot('documents', KnowledgeDocumentSchema, snapshot, options, (d) => d.userId);
    const groups = groupByPartition(
      records,
      (d): Partition => ({ userId: d.userId, agentId: d.agentId }),
      (p) => `${p.userId}|${agentKey(p.agentId)}`,
      (d) => d.id,
    );
    const t = this.tables.documents;
    // Restores of documents take turns: two replacing overlapping partitions could otherwise deadlock.
    await this.database.lockedTransaction('documents-restore', undefined, async (tx) => {
      for (const { partition, records: docs } of groups) {
        await tx.delete(t).where(this.#partition(partition));
        for (const batch of batches(docs, 200)) await tx.insert(t).values(batch.map(toRow));
        for (const doc of docs) await this.#insertChunks(tx, doc);
      }
    });
    return { records: records.length, partitions: groups.length };
  }

  /** Chunks with their search vector: the chunk indexed with its document's title and tags (as in core). */
  async #insertChunks(tx: Tx, doc: KnowledgeDocument): Promise<void> {
    const c = this.tables.documentChunks;
    const rows = doc.chunks.map((chunk) => ({
      userId: doc.userId,
      agentId: agentKey(doc.agentId),
      documentId: doc.id,
      chunkIndex: chunk.index,
      text: chunk.text,
      tokenCount: chunk.tokenCount,
      search: sql`to_tsvector('english'::regconfig, left(${chunkSearchText(doc, chunk.text)}::text, ${SEARCH_TEXT_CHARS}))`,
    }));
    for (const batch of batches(rows)) await tx.insert(c).values(batch);
  }

  /** Documents (with their chunks) matching `where`, in insertion order. */
  async #read(where: SQL | undefined): Promise<KnowledgeDocument[]> {
    const { documents: d, documentChunks: c } = this.tables;
    const { seq: _seq, tagKeys: _tagKeys, ...columns } = getTableColumns(d);
    return this.database.run(async (db) => {
      const docs = await db
        .select(columns)
        .from(d)
        .where(where)
        .orderBy(asc(d.userId), asc(d.agentId), asc(d.seq));
      if (docs.length === 0) return [];
      const chunks = await db
        .select({
          userId: c.userId,
          agentId: c.agentId,
          documentId: c.documentId,
          index: c.chunkIndex,
          text: c.text,
          tokenCount: c.tokenCount,
        })
        .from(c)
        .innerJoin(d, this.#chunkOf)
        .where(where)
        .orderBy(asc(c.chunkIndex));
      const byDoc = new Map<string, KnowledgeDocument['chunks']>();
      for (const { userId, agentId, documentId, ...chunk } of chunks) {
        const key = `${userId}|${agentId}|${documentId}`;
        const list = byDoc.get(key) ?? [];
        list.push(chunk);
        byDoc.set(key, list);
      }
      return docs.map(({ agentId, ...row }) => ({
        ...withoutNulls(row),
        ...agentField(agentId),
        chunks: byDoc.get(`${row.userId}|${agentId}|${row.id}`) ?? [],
      }));
    });
  }

  get #chunkOf(): SQL {
    const { documents: d, documentChunks: c } = this.tables;
    return and(eq(d.userId, c.userId), eq(d.agentId, c.agentId), eq(d.id, c.documentId))!;
  }

  #partition(scope: Partition): SQL {
    const t = this.tables.documents;
    return and(eq(t.userId, scope.userId), eq(t.agentId, agentKey(scope.agentId)))!;
  }
}

function toRow(doc: KnowledgeDocument) {
  return {
    userId: doc.userId,
    agentId: agentKey(doc.agentId),
    id: doc.id,
    title: doc.title,
    description: doc.description ?? null,
    tags: doc.tags,
    tagKeys: tagKeys(doc.tags),
    source: doc.source,
    text: doc.text,
    tokenCount: doc.tokenCount,
    metadata: doc.metadata,
    addedAt: doc.addedAt,
  };
}
