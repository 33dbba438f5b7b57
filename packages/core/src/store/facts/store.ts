import type { Scope, SnapshotSelector } from '../../foundation/scope.js';
import type { WriteOptions } from '../../foundation/version.js';
import type { ErasureResidueReader } from '../erasure-residue.js';
import type { RestoreOptions, RestoreReport, SnapshotEnvelope } from '../snapshot/envelope.js';
import type {
  CategoryCount,
  Fact,
  FactFilter,
  FactHit,
  FactInput,
  FactListOptions,
  FactPatch,
  FactQuery,
} from './record.js';

/**
 * Durable facts about a user (what the fact feature shows and recalls, what extraction and the dream write;
 * memory). Facts are partitioned by `userId` and `agentId`: a read sees exactly the facts written with
 * the same user and agent (no agent = the user's agent-independent facts).
 */
export interface FactStore extends ErasureResidueReader {
  get(scope: Scope, id: string): Promise<Fact | null>;
  list(scope: Scope, options?: FactListOptions): Promise<Fact[]>;
  /**
   * A value that changes with every write to the scope's facts, whoever made it (another process too),
   * read cheaply: what a prompt block built from the facts is reused by while it stays the same. Optional:
   * without it the block is built on every turn.
   */
  revision?(scope: Scope): Promise<string>;
  /** How many facts `list` with the same filter would return without a limit. */
  count(scope: Scope, filter?: FactFilter): Promise<number>;
  /** Throws ConflictError when `input.id` is given and already exists. */
  create(scope: Scope, input: FactInput): Promise<Fact>;
  /**
   * Throws NotFoundError when the fact does not exist in this scope, ConflictError when
   * `options.expectedVersion` is given and the fact is at another version. The version goes up by one.
   */
  update(scope: Scope, id: string, patch: FactPatch, options?: WriteOptions): Promise<Fact>;
  /**
   * True when a fact was deleted, false when there was none. ConflictError when `options.expectedVersion`
   * is given and the fact is at another version (nothing is deleted).
   */
  delete(scope: Scope, id: string, options?: WriteOptions): Promise<boolean>;
  search(scope: Scope, query: FactQuery): Promise<FactHit[]>;
  /** Distinct categories with the number of facts in each, sorted by name. */
  categories(scope: Scope): Promise<CategoryCount[]>;
  /**
   * Deletes every record of the user — every agent — in one bulk operation, whatever their
   * number (no page limit); returns the fact ids removed. Other users are untouched. Used by `forgetUser`.
   */
  eraseUser(userId: string): Promise<string[]>;
  snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<Fact>>;
  /** Replaces every partition (user + agent) that the snapshot contains. Validates everything first. */
  restore(snapshot: unknown, options?: RestoreOptions): Promise<RestoreReport>;
}
