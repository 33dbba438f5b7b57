import type { RecallDecision } from './intent/recall.js';
import type { DroppedItem } from './middleware.js';

/** What one middleware put into the prompt this turn. */
export interface LedgerEntry {
  middleware: string;
  /** Tokens it was allowed. */
  allottedTokens: number;
  /** Tokens its messages took. */
  tokens: number;
  included: number;
  /** The included items' ids, when the middleware names them. */
  includedIds?: string[];
  dropped: DroppedItem[];
  /** What the middleware noted (a fallback taken, why it was skipped). */
  notes?: string[];
}

/**
 * The account of one turn's whole prompt. `totalTokens = baseTokens + tools.tokens + Σ entries.tokens`
 * and never exceeds `maxTokens`: every figure is counted with the same tokenizer as the final messages.
 */
export interface TurnLedger {
  maxTokens: number;
  /** The system prompt and the user message. */
  baseTokens: number;
  /** The tool definitions sent with the request (see `countToolsTokens`). */
  tools: { definitions: number; tokens: number };
  /** Whether the recall middlewares searched memory this turn, who decided and why. */
  recall: RecallDecision;
  entries: LedgerEntry[];
  totalTokens: number;
  tokenizer: string;
}
