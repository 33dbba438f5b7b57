import type { SnapshotSelector, ThreadScope } from '../scope.js';
import type { RestoreOptions, RestoreReport, SnapshotEnvelope } from '../snapshot/envelope.js';
import type { NewStep, Plan, PlanInput, StepUpdate } from './record.js';

/**
 * One plan per conversation (HPD-Agent Plan Mode). The scope must name the thread. Step and plan
 * operations on a thread without a plan throw NotFoundError.
 */
export interface PlanStore {
  /** Creates the thread's plan, replacing any previous one. Steps start `pending`. */
  create(scope: ThreadScope, input: PlanInput): Promise<Plan>;
  get(scope: ThreadScope): Promise<Plan | null>;
  has(scope: ThreadScope): Promise<boolean>;
  updateStep(scope: ThreadScope, stepId: string, update: StepUpdate): Promise<Plan>;
  addStep(scope: ThreadScope, step: NewStep): Promise<Plan>;
  /** Timestamped note; the oldest is dropped past 200 notes. */
  addContextNote(scope: ThreadScope, text: string): Promise<Plan>;
  complete(scope: ThreadScope): Promise<Plan>;
  /** Removes the thread's plan; true when there was one. */
  clear(scope: ThreadScope): Promise<boolean>;
  snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<Plan>>;
  restore(snapshot: unknown, options?: RestoreOptions): Promise<RestoreReport>;
}
