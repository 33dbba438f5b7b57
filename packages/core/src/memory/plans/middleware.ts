import type { PromptMiddleware } from '../../runtime/middleware.js';
import type { PlanStore } from '../../store/plans/store.js';
import { fitPlan } from './fit.js';
import { seenPlanId } from './seen.js';

export const PLAN_MIDDLEWARE = 'plan';

/**
 * Injects the thread's plan as one `[CURRENT_PLAN]` system message, only
 * when the conversation has one. `included` is 1 when the block went in; the parts the budget forced
 * out are listed in `dropped` (`step-2/notes`, `context-note-1`, `step-3`, or the plan id when nothing fit).
 * A plan shown is reported in `shown` with its version, which the plan tools' edits are checked against.
 */
export function planMiddleware(store: PlanStore): PromptMiddleware {
  return {
    name: PLAN_MIDDLEWARE,
    placement: 'system',
    async inject(ctx) {
      const threadId = ctx.scope.threadId ?? ctx.sessionId;
      const plan = await store.get({ ...ctx.scope, threadId });
      if (!plan) return { messages: [], included: 0, dropped: [] };
      const { content, dropped } = fitPlan(plan, ctx.tokenizer, ctx.maxTokens);
      if (content === undefined) return { messages: [], included: 0, dropped };
      return {
        messages: [{ role: 'system', content }],
        included: 1,
        dropped,
        shown: [{ id: seenPlanId(threadId), version: plan.version }],
      };
    },
  };
}
