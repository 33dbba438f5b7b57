import { ConflictError } from '../../foundation/errors.js';
import { shortId } from '../../foundation/ids.js';
import { hasAllTags } from '../../foundation/record-fields.js';
import type { Scope } from '../../foundation/scope.js';
import { parseOrThrow } from '../../foundation/validation.js';
import type { LexicalIndex } from '../../search/lexical-index.js';
import { defaultTokenizer, type Tokenizer } from '../../tokens/tokenizer.js';
import { chunkText } from './chunker.js';
import {
  type DocumentChunkHit,
  type DocumentInput,
  DocumentInputSchema,
  type KnowledgeDocument,
  KnowledgeDocumentSchema,
} from './record.js';

/*
 * What every DocumentStore decides the same way — core's partitioned store and the adapters alike: what
 * `create` stores (its token count and chunks), what a chunk is found by, and, for stores that search with
 * core's LexicalIndex, how a hit maps back to its chunk.
 */

/** How a DocumentStore measures and splits text. */
export interface DocumentChunking {
  tokenizer: Tokenizer;
  /** Maximum tokens per chunk. */
  chunkTokens: number;
}

/** The options every DocumentStore takes for measuring and splitting text. */
export interface DocumentChunkingOptions {
  /** Counts tokens (default: core's default tokenizer). */
  tokenizer?: Tokenizer;
  /** Maximum tokens per chunk (default 300). */
  chunkTokens?: number;
}

/** A DocumentStore's chunking: its options, or the defaults. */
export function documentChunking(options: DocumentChunkingOptions): DocumentChunking {
  return { tokenizer: options.tokenizer ?? defaultTokenizer, chunkTokens: options.chunkTokens ?? 300 };
}

/** The document `create` stores (input checked here), its text counted and split into chunks. */
export function newDocument(
  scope: Scope,
  input: DocumentInput,
  chunking: DocumentChunking,
  now: string,
): KnowledgeDocument {
  const data = parseOrThrow(DocumentInputSchema, input, 'document');
  return parseOrThrow(
    KnowledgeDocumentSchema,
    {
      ...data,
      id: data.id ?? shortId(),
      userId: scope.userId,
      agentId: scope.agentId,
      tokenCount: chunking.tokenizer.count(data.text),
      chunks: chunkText(data.text, chunking.tokenizer, chunking.chunkTokens),
      addedAt: now,
    },
    'document',
  );
}

/** What `create` throws when the partition already holds the id. */
export function documentExistsError(id: string): ConflictError {
  return new ConflictError(`A document with id "${id}" already exists.`);
}

/** The text a chunk is found by, lexically and by vector: its document's title and tags, then the chunk. */
export function chunkSearchText(doc: Pick<KnowledgeDocument, 'title' | 'tags'>, chunk: string): string {
  return `${doc.title}\n${doc.tags.join(' ')}\n${chunk}`;
}

const CHUNK_KEY_SEPARATOR = '#';

/** A document's entries in a LexicalIndex: one per chunk, keyed `<document id>#<chunk index>`. */
export function chunkIndexEntries(doc: KnowledgeDocument): Array<{ key: string; text: string }> {
  return doc.chunks.map((chunk) => ({
    key: `${doc.id}${CHUNK_KEY_SEPARATOR}${chunk.index}`,
    text: chunkSearchText(doc, chunk.text),
  }));
}

/** The documents of one partition, indexed by chunkIndexEntries. */
export interface IndexedDocuments {
  get(id: string): KnowledgeDocument | undefined;
  index(): LexicalIndex;
}

/** `search` over a partition indexed by chunkIndexEntries: the best chunks of documents with all the tags. */
export function searchChunks(
  partition: IndexedDocuments,
  query: { query: string; limit: number; tags?: string[] | undefined },
): DocumentChunkHit[] {
  const docOf = (key: string) => partition.get(key.slice(0, key.lastIndexOf(CHUNK_KEY_SEPARATOR)))!;
  const filter = query.tags?.length ? (key: string) => hasAllTags(docOf(key).tags, query.tags) : undefined;
  return partition
    .index()
    .search(query.query, { limit: query.limit, filter })
    .map((hit) => {
      const doc = docOf(hit.id);
      const chunkIndex = Number(hit.id.slice(hit.id.lastIndexOf(CHUNK_KEY_SEPARATOR) + 1));
      return { documentId: doc.id, title: doc.title, chunk: doc.chunks[chunkIndex]!, score: hit.score };
    });
}
