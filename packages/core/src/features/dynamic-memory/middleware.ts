import type { Fact } from '../../facts/record.js';
import type { FactStore } from '../../facts/store.js';
import type { Tokenizer } from '../../tokenizer.js';
import type { PromptMiddleware } from '../../turn/middleware.js';
import { fitLines, type LineItem } from '../shared/fit-lines.js';
import { factLine, newestUpdatedFirst, renderDynamicMemory } from './format.js';

export const DYNAMIC_MEMORY_MIDDLEWARE = 'dynamic-memory';

interface CachedLine {
  id: string;
  title: string | undefined;
  content: string;
  item: LineItem;
}

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
  // Each fact's line and its token cost, per tokenizer and fact record, so a turn over 10k+ facts does
  // not rebuild every line. Stored facts are immutable records (an update is a new object); a cached
  // line is still checked against the fact's id, title and content (string identity, cheap) in case a
  // store mutates its records in place. A stale count would only skew the estimate, never the limit:
  // fitLines counts the final message exactly.
  const cache = new WeakMap<Tokenizer, WeakMap<Fact, CachedLine>>();
  const itemOf = (tokenizer: Tokenizer, fact: Fact): LineItem => {
    let byFact = cache.get(tokenizer);
    if (!byFact) {
      byFact = new WeakMap();
      cache.set(tokenizer, byFact);
    }
    const cached = byFact.get(fact);
    if (
      cached !== undefined &&
      cached.id === fact.id &&
      cached.title === fact.title &&
      cached.content === fact.content
    ) {
      return cached.item;
    }
    const line = factLine(fact, options.showIds);
    const item: LineItem = { id: fact.id, line, tokens: tokenizer.count(line) };
    byFact.set(fact, { id: fact.id, title: fact.title, content: fact.content, item });
    return item;
  };

  return {
    name: DYNAMIC_MEMORY_MIDDLEWARE,
    placement: 'system',
    async inject(ctx) {
      // `list` returns oldest-created first and most facts were never updated (updatedAt = createdAt):
      // copied in reverse, the array is nearly in the order wanted and the sort is close to linear. The
      // comparator is a total order (ids are unique), so the result does not depend on the input order.
      const listed = await options.store.list(ctx.scope);
      const facts: Fact[] = new Array(listed.length);
      for (let i = 0; i < listed.length; i++) facts[i] = listed[listed.length - 1 - i]!;
      facts.sort(newestUpdatedFirst);
      if (facts.length === 0) return { messages: [], included: 0, dropped: [] };
      const lines = facts.map((fact) => itemOf(ctx.tokenizer, fact));
      const limit = Math.min(ctx.maxTokens, options.maxTokens ?? Number.POSITIVE_INFINITY);
      const block = fitLines(ctx.tokenizer, lines, limit, renderDynamicMemory);
      return {
        messages: block.message ? [block.message] : [],
        included: block.included.length,
        dropped: block.dropped,
      };
    },
  };
}
