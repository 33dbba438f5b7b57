import type { Clock } from '../../foundation/clock.js';
import type { MemoryFeature } from '../../runtime/feature.js';
import { EMPTY_RESULT, type PromptMiddleware } from '../../runtime/middleware.js';
import type { FactStore } from '../../store/facts/store.js';
import { baseScope } from '../../store/sessions/own-session.js';
import type { SessionStore } from '../../store/sessions/store.js';
import type { BackgroundQueue } from '../background/queue.js';
import { ChangesetLog } from '../changesets/changeset-log.js';
import { enforceFactLimits, type FactLimits, type KeepFact } from './fact-limits.js';
import { RecallLog } from './recall-log.js';

export const FACT_LIMITS_MIDDLEWARE = 'fact-limits';

export interface FactLimitsFeatureOptions {
  limits: FactLimits;
  /** Facts never removed (default: metadata `pinned: true`). */
  keep?: KeepFact;
  facts: FactStore;
  sessions: SessionStore;
  /** Where eviction runs, after the reply (KiokuBuilder hands its queue). */
  background: BackgroundQueue;
  changesets?: ChangesetLog;
  clock?: Clock;
}

/**
 * A per-user cap on facts. After every turn it notes which facts the model was shown (the recall log,
 * so a recall counts as a use) and, when the user has more than `maxFacts`, queues an eviction: a
 * changeset deleting the least valuable facts by the policy, applied and kept (revertible by id). Decay
 * (`forgetUnusedAfterDays`) is applied by the same pass, which the dream also runs.
 */
export function factLimits(options: FactLimitsFeatureOptions): MemoryFeature {
  const recalls = new RecallLog(options.sessions);
  const changesets = options.changesets ?? new ChangesetLog(options.sessions);
  const middleware: PromptMiddleware = {
    name: FACT_LIMITS_MIDDLEWARE,
    placement: 'system',
    async inject() {
      return EMPTY_RESULT;
    },
    async afterTurn(ctx) {
      const scope = baseScope(ctx.scope);
      await recalls.record(scope, ctx.recalledFactIds);
      if ((await options.facts.count(scope)) <= options.limits.maxFacts) return;
      options.background.enqueue({
        kind: 'eviction',
        scope,
        run: () =>
          enforceFactLimits({
            facts: options.facts,
            recalls,
            scope,
            limits: options.limits,
            changesets,
            ...(options.keep ? { keep: options.keep } : {}),
            ...(options.clock ? { clock: options.clock } : {}),
          }),
      });
    },
  };
  return { name: FACT_LIMITS_MIDDLEWARE, middleware };
}
