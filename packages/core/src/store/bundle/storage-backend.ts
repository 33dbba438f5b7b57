import type { z } from 'zod';
import type { Scope } from '../../foundation/scope.js';
import type { RecordBackend } from '../backend/record-backend.js';
import type { FactFilterSchema, FactHit, FactQuerySchema } from '../facts/record.js';

/** A fact query as a push-down receives it: validated, defaults filled in. */
export type ParsedFactQuery = z.output<typeof FactQuerySchema>;
/** A fact filter as a push-down receives it: validated. */
export type ParsedFactFilter = z.output<typeof FactFilterSchema>;

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
  /** Optional: create or upgrade what the backend needs (tables, indexes, migrations). Idempotent. */
  setup?(): Promise<unknown>;
  /** Optional: release connections, file handles, timers. */
  close?(): Promise<void>;
}
