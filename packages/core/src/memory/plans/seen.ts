import { ConflictError, isKiokuError, NotFoundError } from '../../foundation/errors.js';
import type { ThreadScope } from '../../foundation/scope.js';
import type { WriteOptions } from '../../foundation/version.js';
import type { ToolContext } from '../../model/tool.js';
import type { Plan } from '../../store/plans/record.js';
import type { PlanStore } from '../../store/plans/store.js';
import { renderPlan } from './format.js';

/*
 * The model edits the plan it was shown in [CURRENT_PLAN]. Its edit is checked against the version it saw:
 * a plan changed since (by another app instance, or the app itself) is not edited blindly; the model is
 * shown the plan as it is now and may retry.
 */

/** The id under which a conversation's `SeenVersions` keeps the thread's plan (never a fact id: it has a `/`). */
export function seenPlanId(threadId: string): string {
  return `plan/${threadId}`;
}

/** A plan edit checked against the version the model saw; CONFLICT shows the plan as it is now. */
export async function editSeenPlan(
  store: PlanStore,
  context: Pick<ToolContext, 'seen'>,
  scope: ThreadScope,
  toolName: string,
  edit: (options: WriteOptions | undefined) => Promise<Plan>,
): Promise<Plan> {
  const id = seenPlanId(scope.threadId);
  const expectedVersion = context.seen?.versionOf(id);
  try {
    const plan = await edit(expectedVersion === undefined ? undefined : { expectedVersion });
    context.seen?.note({ id, version: plan.version });
    return plan;
  } catch (error) {
    if (!isKiokuError(error, 'CONFLICT')) throw error;
    const current = await store.get(scope);
    if (!current) {
      context.seen?.forget(id);
      throw new NotFoundError('The plan was removed since you saw it; create_plan starts a new one.');
    }
    // The model now knows the current plan: a retry is checked against this version.
    context.seen?.note({ id, version: current.version });
    throw new ConflictError(
      `The plan changed since you saw it; it is now:\n${renderPlan(current)}\nIf your change still applies, call ${toolName} again.`,
      { details: { version: current.version } },
    );
  }
}
