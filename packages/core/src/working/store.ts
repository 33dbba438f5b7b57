import type { Scope, SnapshotSelector } from '../scope.js';
import type { RestoreOptions, RestoreReport, SnapshotEnvelope } from '../snapshot/envelope.js';
import type {
  WorkingEntry,
  WorkingEntryInfo,
  WorkingHit,
  WorkingQuery,
  WorkingSetOptions,
} from './record.js';

/**
 * Scratch space with expiry (RockBot working memory), per user + agent, keyed by paths whose first two
 * segments are a namespace. Expired entries are never returned. Each namespace holds at most
 * `maxEntriesPerNamespace` live entries (default 50).
 */
export interface WorkingMemoryStore {
  /** Store or overwrite `key`. At the cap, the oldest entry of the namespace is evicted (or CapacityError). */
  set(scope: Scope, key: string, value: string, options?: WorkingSetOptions): Promise<WorkingEntry>;
  get(scope: Scope, key: string): Promise<WorkingEntry | null>;
  /** Live entries (without values) under `prefix`, or all of them, oldest first. */
  list(scope: Scope, prefix?: string): Promise<WorkingEntryInfo[]>;
  search(scope: Scope, query: WorkingQuery): Promise<WorkingHit[]>;
  delete(scope: Scope, key: string): Promise<boolean>;
  /** Delete every expired entry of every user; returns how many. */
  sweep(): Promise<number>;
  snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<WorkingEntry>>;
  restore(snapshot: unknown, options?: RestoreOptions): Promise<RestoreReport>;
}
