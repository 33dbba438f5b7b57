import type { Fact } from '../../facts/record.js';
import type { FactStore } from '../../facts/store.js';
import type { Tokenizer } from '../../tokenizer.js';
import type { PromptMiddleware } from '../../turn/middleware.js';
import { fitLines } from '../shared/fit-lines.js';
import { factLine, newestUpdatedFirst, renderDynamicMemory } from './format.js';

export const DYNAMIC_MEMORY_MIDDLEWARE = 'dynamic-memory';

export interface DynamicMemoryMiddlewareOptions {
  store: FactStore;
  maxTokens?: number;
  showIds: boolean;
}

/**
 * Injects the user's facts (HPD-Agent's DynamicMemoryFilter) as one `[DYNAMIC_MEMORY]` system message,
 * newest-updated first, within min(allotted tokens, `maxTokens`). Facts that do not fit are dropped with
 * reason `budget`; no facts, or none that fit, means no message.
 */
export function dynamicMemoryMiddleware(options: DynamicMemoryMiddlewareOptions): PromptMiddleware {
  // Token cost of each fact's line, per tokenizer. Stored facts are immutable records, so a cached
  // count stays right; a stale one (a store that mutates in place) only skews the estimate, never the
  // limit, because fitLines counts the final message exactly.
  const costs = new WeakMap<Tokenizer, WeakMap<Fact, number>>();
  const costOf = (tokenizer: Tokenizer, fact: Fact, line: string) => {
    let byFact = costs.get(tokenizer);
    if (!byFact) {
      byFact = new WeakMap();
      costs.set(tokenizer, byFact);
    }
    let tokens = byFact.get(fact);
    if (tokens === undefined) {
      tokens = tokenizer.count(line);
      byFact.set(fact, tokens);
    }
    return tokens;
  };

  return {
    name: DYNAMIC_MEMORY_MIDDLEWARE,
    placement: 'system',
    async inject(ctx) {
      const facts = [...(await options.store.list(ctx.scope))].sort(newestUpdatedFirst);
      if (facts.length === 0) return { messages: [], included: 0, dropped: [] };
      const items = facts.map((fact) => {
        const line = factLine(fact, options.showIds);
        return { id: fact.id, line, tokens: costOf(ctx.tokenizer, fact, line) };
      });
      const limit = Math.min(ctx.maxTokens, options.maxTokens ?? Number.POSITIVE_INFINITY);
      const block = fitLines(ctx.tokenizer, items, limit, renderDynamicMemory);
      return {
        messages: block.message ? [block.message] : [],
        included: block.included.length,
        dropped: block.dropped,
      };
    },
  };
}
