/**
 * Recall's signals and their store wrapper, read from core's sources until `@kioku/core` exports them (its
 * entry points are being rewritten; see the branch's report). The one place the bench imports them from.
 */
export {
  DEFAULT_SIGNAL_WEIGHTS,
  type SignalWeights,
} from '../../../packages/core/src/search/signals/rerank.js';
export {
  RecallFactStore,
  type RecallSignalOptions,
  withRecallSignals,
} from '../../../packages/core/src/store/recall/facts.js';
