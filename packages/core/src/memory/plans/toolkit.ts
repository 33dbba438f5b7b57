import { z } from 'zod';
import { ScopeError } from '../../foundation/errors.js';
import type { Scope, ThreadScope } from '../../foundation/scope.js';
import { defineTool, type Toolkit } from '../../model/tool.js';
import { PlanStepStatusSchema } from '../../store/plans/record.js';
import type { PlanStore } from '../../store/plans/store.js';
import { formatTime, STEP_STATUS_DISPLAY } from './format.js';
import { editSeenPlan, seenPlanId } from './seen.js';

/** Plans belong to a conversation: the tool context's scope must name the thread. */
function threadScope(scope: Readonly<Scope>): ThreadScope {
  if (scope.threadId === undefined) {
    throw new ScopeError('Plan tools need a conversation thread; run them inside a Conversation turn.');
  }
  return { ...scope, threadId: scope.threadId };
}

/** Models send step ids as "2" or 2; both name step 2. */
const StepIdSchema = z
  .union([z.string().regex(/^[0-9]{1,4}$/, 'must be a step number such as "2"'), z.number().int().min(1)])
  .transform(String);

/**
 * The plan tools: create_plan, update_plan_step, add_plan_step, add_context_note,
 * complete_plan on the current thread's plan, answering with short confirmations. Step or plan
 * operations without a plan, or on an unknown step, fail with NOT_FOUND. In a Conversation, each edit is
 * checked against the plan version the model was shown (CONFLICT, with the plan as it is now, when it
 * changed since).
 */
export function planToolkit(store: PlanStore): Toolkit {
  const createPlan = defineTool({
    name: 'create_plan',
    description: 'Plan a multi-step task, shown as [CURRENT_PLAN]; replaces any plan.',
    parameters: z.object({
      goal: z.string().trim().min(1),
      steps: z.array(z.string().trim().min(1)),
    }),
    async execute({ goal, steps }, { scope, seen }) {
      const thread = threadScope(scope);
      const plan = await store.create(thread, { goal, steps });
      seen?.note({ id: seenPlanId(thread.threadId), version: plan.version });
      const list = plan.steps.map((s) => `\n  [${s.id}] ${s.description}`).join('');
      const count = plan.steps.length;
      return `Created plan ${plan.id} with ${count} ${count === 1 ? 'step' : 'steps'}.${list}`;
    },
  });

  const updateStep = defineTool({
    name: 'update_plan_step',
    description: 'Set a plan step’s status and notes.',
    parameters: z.object({
      step_id: StepIdSchema,
      status: PlanStepStatusSchema,
      notes: z.string().optional(),
    }),
    async execute({ step_id, status, notes }, context) {
      const thread = threadScope(context.scope);
      const plan = await editSeenPlan(store, context, thread, 'update_plan_step', (options) =>
        store.updateStep(thread, step_id, { status, ...(notes === undefined ? {} : { notes }) }, options),
      );
      const step = plan.steps.find((s) => s.id === step_id)!;
      return `Step ${step.id} (${step.description}) is now ${STEP_STATUS_DISPLAY[step.status].label}.`;
    },
  });

  const addStep = defineTool({
    name: 'add_plan_step',
    description: 'Add a plan step, at the end or after a step.',
    parameters: z.object({
      description: z.string().trim().min(1),
      after_step_id: StepIdSchema.optional(),
    }),
    async execute({ description, after_step_id }, context) {
      const thread = threadScope(context.scope);
      const step = { description, ...(after_step_id === undefined ? {} : { afterStepId: after_step_id }) };
      const plan = await editSeenPlan(store, context, thread, 'add_plan_step', (options) =>
        store.addStep(thread, step, options),
      );
      // New steps get the next number, so the highest id is the one just added.
      const id = String(Math.max(...plan.steps.map((s) => Number(s.id))));
      return `Added step ${id}: ${description}`;
    },
  });

  const addNote = defineTool({
    name: 'add_context_note',
    description: 'Note a discovery or decision that matters for the plan.',
    parameters: z.object({ note: z.string().trim().min(1) }),
    async execute({ note }, context) {
      const thread = threadScope(context.scope);
      const plan = await editSeenPlan(store, context, thread, 'add_context_note', (options) =>
        store.addContextNote(thread, note, options),
      );
      return `Added context note [${formatTime(plan.contextNotes.at(-1)!.at)}].`;
    },
  });

  const completePlan = defineTool({
    name: 'complete_plan',
    description: 'Mark the plan completed.',
    parameters: z.object({}),
    async execute(_args, context) {
      const thread = threadScope(context.scope);
      const plan = await editSeenPlan(store, context, thread, 'complete_plan', (options) =>
        store.complete(thread, options),
      );
      const open = plan.steps.filter((s) => s.status !== 'completed' && s.status !== 'skipped').length;
      const rest = open === 0 ? '' : ` (${open} ${open === 1 ? 'step was' : 'steps were'} not completed)`;
      return `Completed plan ${plan.id}: ${plan.goal}${rest}`;
    },
  });

  return { name: 'plan-mode', tools: [createPlan, updateStep, addStep, addNote, completePlan] };
}
