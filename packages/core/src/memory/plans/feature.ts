import type { MemoryFeature } from '../../runtime/feature.js';
import type { PlanStore } from '../../store/plans/store.js';
import { planMiddleware } from './middleware.js';
import { planToolkit } from './toolkit.js';

export interface PlanModeOptions {
  /** Where plans live: one per conversation thread. */
  store: PlanStore;
}

/**
 * Plan mode (`withPlanMode()`): the thread's plan injected as `[CURRENT_PLAN]` whenever one
 * exists (within the budget's `plan` share, 500 tokens by default), and the tools to create and follow it.
 */
export function planMode(options: PlanModeOptions): MemoryFeature {
  return {
    name: 'plan-mode',
    middleware: planMiddleware(options.store),
    toolkit: planToolkit(options.store),
  };
}
