import type { Scope, SnapshotSelector } from '../../foundation/scope.js';
import type { WriteOptions } from '../../foundation/version.js';
import type { ErasureResidueReader } from '../erasure-residue.js';
import type { RestoreOptions, RestoreReport, SnapshotEnvelope } from '../snapshot/envelope.js';
import type {
  WorkingEntry,
  WorkingEntryInfo,
  WorkingHit,
  WorkingQuery,
  WorkingSetOptions,
} from './record.js';

/**
 * Scratch space with expiry (working memory), per user + agent, keyed by paths whose first two
 * segments are a namespace. Expired entries are never returned. Each namespace holds at most
 * `maxEntriesPerNamespace` live entries (default 50). Every entry has a version: 1 when its key is set
 * without a live entry, one more on every `set` of the live entry; `set` and `delete` take an
 * `expectedVersion` and check it in the same atomic step as their write.
 */
export interface WorkingMemoryStore extends ErasureResidueReader {
  /**
   * Store or overwrite `key`. At the cap, the oldest entry of the namespace is evicted (or CapacityError).
   * With `options.expectedVersion` (0: the key has no live entry), a key at another version is
   * ConflictError (`details: { expectedVersion, actualVersion }`) and nothing is written.
   */
  set(scope: Scope, key: string, value: string, options?: WorkingSetOptions): Promise<WorkingEntry>;
  get(scope: Scope, key: string): Promise<WorkingEntry | null>;
  /** Live entries (without values) under `prefix`, or all of them, oldest first. */
  list(scope: Scope, prefix?: string): Promise<WorkingEntryInfo[]>;
  search(scope: Scope, query: WorkingQuery): Promise<WorkingHit[]>;
  /**
   * Delete `key`; true when it had a live entry. With `options.expectedVersion`, a key whose live entry is
   * at another version, or has none (actual version 0), is ConflictError and nothing is deleted.
   */
  delete(scope: Scope, key: string, options?: WriteOptions): Promise<boolean>;
  /** Delete every expired entry of every user; returns how many. */
  sweep(): Promise<number>;
  /**
   * Deletes every record of the user — every agent, every namespace, expired entries too — in one bulk operation, whatever their
   * number (no page limit); returns the keys of the live entries removed. Other users are untouched. Used by `forgetUser`.
   */
  eraseUser(userId: string): Promise<string[]>;
  snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<WorkingEntry>>;
  restore(snapshot: unknown, options?: RestoreOptions): Promise<RestoreReport>;
}
