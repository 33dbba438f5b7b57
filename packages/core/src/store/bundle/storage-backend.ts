import type { z } from 'zod';
import type { Scope } from '../../foundation/scope.js';
import type { RecordBackend } from '../backend/record-backend.js';
import type { DetailHit, DetailQuerySchema } from '../details/record.js';
import type { DocumentChunkHit, DocumentQuerySchema } from '../documents/record.js';
import type { FactFilterSchema, FactHit, FactQuerySchema } from '../facts/record.js';

/** A fact query as a push-down receives it: validated, defaults filled in. */
export type ParsedFactQuery = z.output<typeof FactQuerySchema>;
/** A fact filter as a push-down receives it: validated. */
export type ParsedFactFilter = z.output<typeof FactFilterSchema>;
/** A document query as a push-down receives it: validated, defaults filled in. */
export type ParsedDocumentQuery = z.output<typeof DocumentQuerySchema>;
/** A detail query as a push-down receives it: validated, defaults filled in. */
export type ParsedDetailQuery = z.output<typeof DetailQuerySchema>;

/**
 * Everything a storage adapter implements to get all six store kinds, snapshots, restore and erasure
 * from `storesOverBackend`: the four record methods of `RecordBackend` (required) and, optionally,
 * `version` (cache decoded partitions), push-downs that answer a fact query where the data lives instead
 * of in process memory, and the lifecycle of what the adapter holds open.
 *
 * A push-down must answer exactly as core would over the same records (same facts, same order, same
 * scores within rounding): the conformance suite checks it.
 */
export interface StorageBackend extends RecordBackend {
  /** Optional push-down: a fact search in one user (and agent) scope, ranked as core ranks. */
  searchFacts?(scope: Scope, query: ParsedFactQuery): Promise<FactHit[]>;
  /** Optional push-down: how many facts of the scope match the filter. */
  countFacts?(scope: Scope, filter: ParsedFactFilter): Promise<number>;
  /** Optional push-down: a search of the document chunks of one user (and agent) scope, ranked as core ranks. */
  searchDocuments?(scope: Scope, query: ParsedDocumentQuery): Promise<DocumentChunkHit[]>;
  /** Optional push-down: a search of one user's details, ranked as core ranks. */
  searchDetails?(scope: Scope, query: ParsedDetailQuery): Promise<DetailHit[]>;
  /**
   * Optional: true when the push-downs rank by the backend's own rule on purpose (an adapter's option such
   * as store-sqlite's `ranking: 'bm25'`), so searches always go to them, even over a partition this process
   * holds decoded (which core would rank by its own rule).
   */
  readonly ownRanking?: boolean;
  /** Optional: create or upgrade what the backend needs (tables, indexes, migrations). Idempotent. */
  setup?(): Promise<unknown>;
  /** Optional: release connections, file handles, timers. */
  close?(): Promise<void>;
}
