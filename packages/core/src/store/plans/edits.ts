import { CapacityError, NotFoundError } from '../../foundation/errors.js';
import { shortId } from '../../foundation/ids.js';
import { withoutUndefined } from '../../foundation/objects.js';
import type { ThreadScope } from '../../foundation/scope.js';
import { parseOrThrow } from '../../foundation/validation.js';
import { checkVersion, parseWriteOptions, type WriteOptions } from '../../foundation/version.js';
import {
  ContextNoteSchema,
  type NewStep,
  NewStepSchema,
  PLAN_LIMITS,
  type Plan,
  type PlanInput,
  PlanInputSchema,
  type PlanStep,
  type StepUpdate,
  StepUpdateSchema,
} from './record.js';

/*
 * What a plan becomes on each PlanStore operation, for every store alike: core's partitioned store and
 * the adapters differ only in how they read and write the plan (a partition, a locked row, a
 * compare-and-set), never in what they write.
 */

/** A change to a thread's plan, applied inside the store's read-modify-write. Pure: same plan, same result. */
export type PlanEdit = (plan: Plan) => Plan;

/** The thread's new plan (`input` checked here): steps "1", "2", … all `pending`. */
export function newPlan(scope: ThreadScope, input: PlanInput, now: string): Plan {
  const data = parseOrThrow(PlanInputSchema, input, 'plan');
  return {
    id: `plan-${shortId()}`,
    userId: scope.userId,
    ...(scope.agentId === undefined ? {} : { agentId: scope.agentId }),
    threadId: scope.threadId,
    goal: data.goal,
    steps: data.steps.map((description, i) => ({
      id: String(i + 1),
      description,
      status: 'pending',
      updatedAt: now,
    })),
    contextNotes: [],
    isComplete: false,
    createdAt: now,
    updatedAt: now,
    version: 1,
  };
}

/** CONFLICT when `expectedVersion` is given and differs from the plan's version. */
export function checkPlanVersion(plan: Pick<Plan, 'version'>, expectedVersion: number | undefined): void {
  checkVersion('plan', plan.version, expectedVersion);
}

/** The edit, checked against `options.expectedVersion` first and counted as one more version. */
function versioned(options: WriteOptions | undefined, edit: PlanEdit): PlanEdit {
  const { expectedVersion } = parseWriteOptions(options);
  return (plan) => {
    checkPlanVersion(plan, expectedVersion);
    return { ...edit(plan), version: plan.version + 1 };
  };
}

/** What a change to a thread without a plan throws. */
export function missingPlanError(): NotFoundError {
  return new NotFoundError('This conversation has no plan; create one first.');
}

/**
 * The edits behind PlanStore's `updateStep`, `addStep`, `addContextNote` and `complete`. Each checks its
 * input when it is made — before the store reads or locks anything — and returns the pure change, which
 * refuses a plan at another version than `options.expectedVersion` (CONFLICT) and bumps the version.
 */
export const planEdits = {
  /** Sets the step's status and/or notes (what is not given stays); NotFoundError for an unknown step. */
  updateStep(stepId: string, update: StepUpdate, now: string, options?: WriteOptions): PlanEdit {
    const changes = withoutUndefined(parseOrThrow(StepUpdateSchema, update, 'step update'));
    return versioned(options, (plan) => {
      const index = plan.steps.findIndex((step) => step.id === stepId);
      if (index < 0) throw new NotFoundError(`Plan has no step "${stepId}".`, { details: { stepId } });
      const steps = [...plan.steps];
      steps[index] = { ...steps[index]!, ...changes, updatedAt: now };
      return { ...plan, steps, updatedAt: now };
    });
  },

  /** A `pending` step at the end or after `afterStepId`; its id is one more than the highest so far (never reused). */
  addStep(step: NewStep, now: string, options?: WriteOptions): PlanEdit {
    const data = parseOrThrow(NewStepSchema, step, 'step');
    return versioned(options, (plan) => {
      if (plan.steps.length >= PLAN_LIMITS.steps) {
        throw new CapacityError(
          `The plan is full: it holds at most ${PLAN_LIMITS.steps} steps. Complete or remove steps, or start a new plan.`,
          { details: { limit: PLAN_LIMITS.steps } },
        );
      }
      const nextId = String(plan.steps.reduce((max, st) => Math.max(max, Number(st.id)), 0) + 1);
      const newStep: PlanStep = {
        id: nextId,
        description: data.description,
        status: 'pending',
        updatedAt: now,
      };
      const steps = [...plan.steps];
      if (data.afterStepId === undefined) steps.push(newStep);
      else {
        const at = steps.findIndex((st) => st.id === data.afterStepId);
        if (at < 0) throw new NotFoundError(`Plan has no step "${data.afterStepId}".`);
        steps.splice(at + 1, 0, newStep);
      }
      return { ...plan, steps, updatedAt: now };
    });
  },

  /** A timestamped note; past PLAN_LIMITS.contextNotes the oldest go. */
  addContextNote(text: string, now: string, options?: WriteOptions): PlanEdit {
    const note = parseOrThrow(ContextNoteSchema, { at: now, text }, 'context note');
    return versioned(options, (plan) => ({
      ...plan,
      contextNotes: [...plan.contextNotes, note].slice(-PLAN_LIMITS.contextNotes),
      updatedAt: now,
    }));
  },

  complete(now: string, options?: WriteOptions): PlanEdit {
    return versioned(options, (plan) => ({ ...plan, isComplete: true, completedAt: now, updatedAt: now }));
  },
};
