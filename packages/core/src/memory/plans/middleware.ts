import { BlockCache } from '../../runtime/block-cache.js';
import type { MiddlewareResult, PrefetchContext, PromptMiddleware } from '../../runtime/middleware.js';
import type { Plan } from '../../store/plans/record.js';
import type { PlanStore } from '../../store/plans/store.js';
import type { Tokenizer } from '../../tokens/tokenizer.js';
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
  // The last block per user: a plan changes only by an edit, which raises its version, so the same plan
  // at the same version and limit is not rendered and counted again.
  const blocks = new BlockCache();
  const load = (ctx: PrefetchContext) =>
    store.get({ ...ctx.scope, threadId: ctx.scope.threadId ?? ctx.sessionId });
  return {
    name: PLAN_MIDDLEWARE,
    placement: 'system',
    prefetch: load,
    async inject(ctx) {
      const threadId = ctx.scope.threadId ?? ctx.sessionId;
      const plan = await ((ctx.prefetched as ReturnType<typeof load> | undefined) ?? load(ctx));
      if (!plan) return { messages: [], included: 0, dropped: [] };
      const mark = JSON.stringify([threadId, plan.id, plan.version, plan.updatedAt]);
      const cached = blocks.get(ctx.scope, ctx.tokenizer, ctx.maxTokens, mark);
      if (cached) return cached;
      const result = planBlock(plan, threadId, ctx.tokenizer, ctx.maxTokens);
      blocks.set(ctx.scope, ctx.tokenizer, ctx.maxTokens, mark, result);
      return result;
    },
  };
}

function planBlock(plan: Plan, threadId: string, tokenizer: Tokenizer, maxTokens: number): MiddlewareResult {
  const { content, dropped } = fitPlan(plan, tokenizer, maxTokens);
  if (content === undefined) return { messages: [], included: 0, dropped };
  return {
    messages: [{ role: 'system', content }],
    included: 1,
    dropped,
    shown: [{ id: seenPlanId(threadId), version: plan.version }],
  };
}
