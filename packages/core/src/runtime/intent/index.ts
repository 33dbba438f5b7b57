export { decideRecall } from './decide.js';
export { classifyIntent, DETERMINISTIC_INTENT, deterministicIntent } from './deterministic.js';
export {
  INTENT_INSTRUCTIONS,
  MODEL_INTENT,
  MODEL_INTENT_DEFAULTS,
  type ModelIntentOptions,
  modelIntentClassifier,
} from './model.js';
