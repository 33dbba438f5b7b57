import type { ModelUsage } from '../../model/chat-model.js';
import type { ChatMessage } from '../../model/messages.js';

/**
 * When the recall middlewares search memory: `auto` lets the turn's intent step decide, `always` and
 * `never` decide for every turn.
 */
export type RecallMode = 'auto' | 'always' | 'never';

export const RECALL_MODES: readonly RecallMode[] = Object.freeze(['auto', 'always', 'never']);

/**
 * `concrete`: the message is specific and it, with its context, holds what it needs (recall is skipped).
 * `ambiguous`: it refers to something neither holds — "the DB", "as before", someone not mentioned — or
 * misses an argument (recall resolves it).
 */
export type Intent = 'concrete' | 'ambiguous';

/** What an intent classifier reads. */
export interface IntentInput {
  userMessage: string;
  /**
   * The context the message is read against, oldest first: the recent turns of the session when the
   * prompt replays them, otherwise nothing.
   */
  context: readonly ChatMessage[];
  signal?: AbortSignal;
}

/** An intent and why. */
export interface IntentVerdict {
  intent: Intent;
  /** One sentence for a person reading the ledger. */
  reason: string;
  /** What the verdict rests on, e.g. `"the DB" is not in the context`. */
  cues: string[];
}

/** A classifier's failure that another classifier covered for. */
export interface IntentFallback {
  /** The classifier that failed, e.g. `model`. */
  from: string;
  /** `MODEL_OUTPUT` (malformed reply), `TIMEOUT`, or the error's code. */
  code: string;
  message: string;
}

/** What an intent classifier answers. */
export interface IntentClassification extends IntentVerdict {
  /** The classifier that decided: `deterministic`, `model`, … */
  by: string;
  /** Present when the configured classifier failed and `by` decided instead. */
  fallback?: IntentFallback;
  /** Model tokens the classification spent. */
  usage?: ModelUsage;
}

/** Decides, once per turn and before recall, whether a user message needs memory. */
export interface IntentClassifier {
  readonly name: string;
  classify(input: IntentInput): Promise<IntentClassification>;
}

/**
 * The turn's recall decision: in the ledger (`TurnLedger.recall`) and in every middleware's context
 * (`MiddlewareContext.recall`). Recall middlewares (`PromptMiddleware.recall`) run only when `recall`.
 */
export interface RecallDecision {
  recall: boolean;
  mode: RecallMode;
  /** `setting` when the mode decided (or nothing needed deciding), else the classifier that did. */
  by: string;
  intent?: Intent;
  reason: string;
  cues?: string[];
  fallback?: IntentFallback;
  usage?: ModelUsage;
  /**
   * Set on a turn's result (`TurnResult.ledger`) when recall was skipped and the model then called a
   * recall tool (`Tool.recall`): the model asked memory itself.
   */
  forcedBy?: { tool: string };
}
