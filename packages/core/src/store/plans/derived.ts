import { parseThreadScope, type ThreadScope } from '../../foundation/scope.js';
import type { WriteOptions } from '../../foundation/version.js';
import { type PlanEdit, planEdits } from './edits.js';
import type { NewStep, Plan, StepUpdate } from './record.js';

// biome-ignore lint/suspicious/noExplicitAny: the mixin pattern needs a constructor of any arguments.
type AbstractConstructor<T = object> = abstract new (...args: any[]) => T;

/**
 * The PlanStore methods every store derives the same way, mixed into an adapter's own base class: `has`
 * from `get`, and `updateStep`, `addStep`, `addContextNote`, `complete` as `modify` with core's
 * `planEdits`. An adapter implements the primitives — `create`, `get`, `modify`, `delete`, `snapshot`,
 * `restore` — and keeps its own base class:
 *
 * ```ts
 * class MyPlanStore extends withPlanEdits(MyStoreBase) implements PlanStore {
 *   override async get(scope) { … }
 *   override async modify(scope, make) { … }
 *   …
 * }
 * ```
 */
/** What `withPlanEdits` adds, and the two primitives it builds on (which the store overrides). */
export interface PlanEditMethods {
  get(scope: ThreadScope): Promise<Plan | null>;
  modify(scope: ThreadScope, make: (now: string) => PlanEdit): Promise<Plan>;
  has(scope: ThreadScope): Promise<boolean>;
  updateStep(scope: ThreadScope, stepId: string, update: StepUpdate, options?: WriteOptions): Promise<Plan>;
  addStep(scope: ThreadScope, step: NewStep, options?: WriteOptions): Promise<Plan>;
  addContextNote(scope: ThreadScope, text: string, options?: WriteOptions): Promise<Plan>;
  complete(scope: ThreadScope, options?: WriteOptions): Promise<Plan>;
}

export function withPlanEdits<B extends AbstractConstructor>(
  Base: B,
): B & AbstractConstructor<PlanEditMethods> {
  abstract class PlanEdits extends Base {
    abstract get(scope: ThreadScope): Promise<Plan | null>;
    /**
     * The primitive every edit goes through: the edit `make` returns for the store's current time, applied
     * to the thread's plan in one atomic read-modify-write; NotFoundError (`missingPlanError()`) when the
     * thread has no plan. `scope` is already validated.
     */
    abstract modify(scope: ThreadScope, make: (now: string) => PlanEdit): Promise<Plan>;

    async has(scope: ThreadScope): Promise<boolean> {
      return (await this.get(scope)) !== null;
    }

    updateStep(
      scope: ThreadScope,
      stepId: string,
      update: StepUpdate,
      options?: WriteOptions,
    ): Promise<Plan> {
      return this.#edit(scope, (now) => planEdits.updateStep(stepId, update, now, options));
    }

    addStep(scope: ThreadScope, step: NewStep, options?: WriteOptions): Promise<Plan> {
      return this.#edit(scope, (now) => planEdits.addStep(step, now, options));
    }

    addContextNote(scope: ThreadScope, text: string, options?: WriteOptions): Promise<Plan> {
      return this.#edit(scope, (now) => planEdits.addContextNote(text, now, options));
    }

    complete(scope: ThreadScope, options?: WriteOptions): Promise<Plan> {
      return this.#edit(scope, (now) => planEdits.complete(now, options));
    }

    async #edit(scope: ThreadScope, make: (now: string) => PlanEdit): Promise<Plan> {
      return this.modify(parseThreadScope(scope), make);
    }
  }
  return PlanEdits;
}
