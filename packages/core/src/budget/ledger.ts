import type { DroppedItem } from '../turn/middleware.js';

/** What one middleware put into the prompt this turn. */
export interface LedgerEntry {
  middleware: string;
  /** Tokens it was allowed. */
  allottedTokens: number;
  /** Tokens its messages took. */
  tokens: number;
  included: number;
  dropped: DroppedItem[];
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
  entries: LedgerEntry[];
  totalTokens: number;
  tokenizer: string;
}
