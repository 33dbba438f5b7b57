import type { Scope, SnapshotSelector } from '../../foundation/scope.js';
import type { ErasureResidueReader } from '../erasure-residue.js';
import type { RestoreOptions, RestoreReport, SnapshotEnvelope } from '../snapshot/envelope.js';
import type { DetailHit, DetailInput, DetailListOptions, DetailQuery, DetailRecord } from './record.js';

/**
 * The detail store behind MemoryRefs. Records belong to the scope's user; `agentId` and `threadId` of the
 * scope are recorded on `create` and can filter `list`/`search`. Reads never cross users.
 */
export interface DetailStore extends ErasureResidueReader {
  /** Store full content; the token count is measured by the store's tokenizer. */
  create(scope: Scope, input: DetailInput): Promise<DetailRecord>;
  /** The record, or null when absent (or deactivated, unless `includeInactive`). */
  get(scope: Scope, id: string, options?: { includeInactive?: boolean }): Promise<DetailRecord | null>;
  /** Newest first. */
  list(scope: Scope, options?: DetailListOptions): Promise<DetailRecord[]>;
  search(scope: Scope, query: DetailQuery): Promise<DetailHit[]>;
  /** Hide a record from get/list/search without deleting it (`is_active = false`). */
  deactivate(scope: Scope, id: string): Promise<boolean>;
  /** Delete a record for good (active or not); true when there was one. */
  delete(scope: Scope, id: string): Promise<boolean>;
  /**
   * Deletes every record of the user — every agent, inactive records too — in one bulk operation, whatever their
   * number (no page limit); returns the detail ids removed. Other users are untouched. Used by `forgetUser`.
   */
  eraseUser(userId: string): Promise<string[]>;
  snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<DetailRecord>>;
  restore(snapshot: unknown, options?: RestoreOptions): Promise<RestoreReport>;
}
