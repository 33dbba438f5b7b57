import type { SnapshotSelector, ThreadScope } from '../../foundation/scope.js';
import type { WriteOptions } from '../../foundation/version.js';
import type { ErasureResidueReader } from '../erasure-residue.js';
import type { RestoreOptions, RestoreReport, SnapshotEnvelope } from '../snapshot/envelope.js';
import type { NewStep, Plan, PlanInput, StepUpdate } from './record.js';

/**
 * One plan per conversation. The scope must name the thread. Step and plan
 * operations on a thread without a plan throw NotFoundError.
 */
export interface PlanStore extends ErasureResidueReader {
  /**
   * Creates the thread's plan, replacing any previous one, at version 1 with a new plan id. Steps start
   * `pending`. (An edit that expected a version of the replaced plan is checked against the new plan's.)
   */
  create(scope: ThreadScope, input: PlanInput): Promise<Plan>;
  get(scope: ThreadScope): Promise<Plan | null>;
  has(scope: ThreadScope): Promise<boolean>;
  /*
   * Every edit below raises the plan's version by one. With `options.expectedVersion`, an edit of a plan
   * at another version throws ConflictError and changes nothing (see `records/version.ts`).
   */
  updateStep(scope: ThreadScope, stepId: string, update: StepUpdate, options?: WriteOptions): Promise<Plan>;
  addStep(scope: ThreadScope, step: NewStep, options?: WriteOptions): Promise<Plan>;
  /** Timestamped note; the oldest is dropped past 200 notes. */
  addContextNote(scope: ThreadScope, text: string, options?: WriteOptions): Promise<Plan>;
  complete(scope: ThreadScope, options?: WriteOptions): Promise<Plan>;
  /** Removes the thread's plan; true when there was one. ConflictError as for edits. */
  delete(scope: ThreadScope, options?: WriteOptions): Promise<boolean>;
  /**
   * Deletes every record of the user — every agent, every thread — in one bulk operation, whatever their
   * number (no page limit); returns the plan ids removed. Other users are untouched. Used by `forgetUser`.
   */
  eraseUser(userId: string): Promise<string[]>;
  snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<Plan>>;
  restore(snapshot: unknown, options?: RestoreOptions): Promise<RestoreReport>;
}
