import type { MemoryFeature } from '../../runtime/feature.js';
import type { PlanStore } from '../../store/plans/store.js';
import { planMiddleware } from './middleware.js';
import { planToolkit } from './toolkit.js';

export { PLAN_END, PLAN_START, renderPlan, STEP_STATUS_DISPLAY } from './format.js';
export { PLAN_MIDDLEWARE } from './middleware.js';

export interface PlanModeOptions {
  /** Where plans live: one per conversation thread. */
  store: PlanStore;
}

/**
 * HPD-Agent's Plan Mode (`.WithPlanMode()`): the thread's plan injected as `[CURRENT_PLAN]` whenever one
 * exists (within the budget's `plan` share, 500 tokens by default), and the tools to create and follow it.
 */
export function planMode(options: PlanModeOptions): MemoryFeature {
  return {
    name: 'plan-mode',
    middleware: planMiddleware(options.store),
    toolkit: planToolkit(options.store),
  };
}
