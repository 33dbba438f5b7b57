import { z } from 'zod';
import { parseOrThrow } from '../foundation/validation.js';

export const TokenBudgetSchema = z.object({
  /** The whole prompt: system prompt, every injection, history and the user message. */
  maxTokens: z.number().int().min(1).max(10_000_000).default(16_000),
  /**
   * Per-middleware caps in tokens, by middleware name (e.g. `{ 'facts': 4000 }`), over
   * DEFAULT_SHARES. A middleware without a share may use whatever is left.
   */
  shares: z.record(z.string(), z.number().int().min(0)).default({}),
});

export type TokenBudgetOptions = z.input<typeof TokenBudgetSchema>;
export type TokenBudget = z.output<typeof TokenBudgetSchema>;

/** Validate budget options; the default shares apply to middlewares the options do not name. */
export function parseBudget(options: TokenBudgetOptions = {}): TokenBudget {
  const budget = parseOrThrow(TokenBudgetSchema, options, 'token budget');
  return { ...budget, shares: { ...DEFAULT_SHARES, ...budget.shares } };
}

/**
 * A 16K prompt's breakdown: every-fact block 4000, knowledge documents 6000, plan 500, history 3000; and 1500 for
 * the parts of offloaded outputs that MemoryRef expansion injects.
 */
export const DEFAULT_SHARES: Readonly<Record<string, number>> = Object.freeze({
  facts: 4_000,
  knowledge: 6_000,
  plan: 500,
  conversation: 3_000,
  'memory-ref-expansion': 1_500,
});
