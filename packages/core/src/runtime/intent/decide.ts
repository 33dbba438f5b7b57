import { isKiokuError } from '../../foundation/errors.js';
import type { IntentClassifier, IntentInput, RecallDecision, RecallMode } from './recall.js';

/**
 * The turn's recall decision. `always` and `never` decide without reading the message; `auto` asks the
 * classifier, and recall runs when it finds the message ambiguous. A classifier that throws (a custom one:
 * the built-in ones fall back instead) leaves recall on, and the decision says why.
 */
export async function decideRecall(
  mode: RecallMode,
  classifier: IntentClassifier,
  input: IntentInput,
): Promise<RecallDecision> {
  if (mode === 'always') {
    return { recall: true, mode, by: 'setting', reason: "Recall runs on every turn (recall: 'always')." };
  }
  if (mode === 'never') {
    return { recall: false, mode, by: 'setting', reason: "Recall is off (recall: 'never')." };
  }
  try {
    const c = await classifier.classify(input);
    return {
      recall: c.intent === 'ambiguous',
      mode,
      by: c.by,
      intent: c.intent,
      reason: c.reason,
      ...(c.cues.length > 0 ? { cues: c.cues } : {}),
      ...(c.fallback ? { fallback: c.fallback } : {}),
      ...(c.usage ? { usage: c.usage } : {}),
    };
  } catch (error) {
    if (input.signal?.aborted) throw error;
    return {
      recall: true,
      mode,
      by: 'setting',
      reason: 'The intent classifier failed, so recall runs.',
      fallback: {
        from: classifier.name,
        code: isKiokuError(error) ? error.code : 'CLASSIFIER_FAILED',
        message: (error instanceof Error ? error.message : String(error)).slice(0, 500),
      },
    };
  }
}
