import type { Scope, SnapshotSelector } from '../../foundation/scope.js';
import type { ErasureResidueReader } from '../erasure-residue.js';
import type { RestoreOptions, RestoreReport, SnapshotEnvelope } from '../snapshot/envelope.js';
import type {
  CombinedKnowledge,
  DocumentChunkHit,
  DocumentInput,
  DocumentQuery,
  KnowledgeDocument,
} from './record.js';

/**
 * Knowledge documents an agent answers from. Partitioned by user + agent; to
 * share one agent's knowledge among all users, keep it under a dedicated owner id (e.g. `shared`).
 */
export interface DocumentStore extends ErasureResidueReader {
  /** Stores the text and splits it into chunks. Throws ConflictError on an existing `input.id`. */
  create(scope: Scope, input: DocumentInput): Promise<KnowledgeDocument>;
  get(scope: Scope, id: string): Promise<KnowledgeDocument | null>;
  /** All documents, oldest first. */
  list(scope: Scope): Promise<KnowledgeDocument[]>;
  /**
   * A value that changes with every write to the scope's documents (create, delete, restore, erasure),
   * whoever made it (another process too), read cheaply: the knowledge block is reused while it stays the
   * same, without reading the documents again. Optional: without it the documents are read every turn.
   */
  revision?(scope: Scope): Promise<string>;
  /** True when a document was deleted, false when there was none. */
  delete(scope: Scope, id: string): Promise<boolean>;
  /** Chunks most relevant to the query (IndexedRetrieval). */
  search(scope: Scope, query: DocumentQuery): Promise<DocumentChunkHit[]>;
  /** Every document's text, oldest first, within `maxTokens` (FullTextInjection). */
  combinedText(scope: Scope, maxTokens: number): Promise<CombinedKnowledge>;
  /**
   * Deletes every record of the user — every agent, with the chunks — in one bulk operation, whatever their
   * number (no page limit); returns the document ids removed. Other users are untouched. Used by `forgetUser`.
   */
  eraseUser(userId: string): Promise<string[]>;
  snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<KnowledgeDocument>>;
  restore(snapshot: unknown, options?: RestoreOptions): Promise<RestoreReport>;
}
