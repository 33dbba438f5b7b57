import type { ChatMessage } from '../../../model/messages.js';
import type { MemoryFeature } from '../../../runtime/feature.js';
import { LineFitter } from '../../../runtime/fit-lines.js';
import {
  type DroppedItem,
  EMPTY_RESULT,
  type PrefetchContext,
  type PromptMiddleware,
} from '../../../runtime/middleware.js';
import { formatMemoryLine, MEMORIES_FRAME, renderMemories } from './format.js';
import { RelevantMemory, type RelevantMemoryOptions } from './manager.js';
import type { MemorySearchResult } from './types.js';

function droppedAs(reason: DroppedItem['reason'], memories: readonly MemorySearchResult[]): DroppedItem[] {
  return memories.map((m) => ({ id: m.id, reason }));
}

/** The last assistant message that answers rather than calls tools. */
function finalAnswer(messages: readonly ChatMessage[]): ChatMessage | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === 'assistant' && !m.toolCalls?.length) return m;
  }
  return undefined;
}

/**
 * Relevant memory as a turn feature: before the turn (when `autoRetrieve`) the memories
 * relevant to the user message are injected as "Relevant memories from past interactions:"; after it
 * (when `autoStore`) the exchange is stored. Middleware name `relevant-memory`.
 */
export function relevantMemory(manager: RelevantMemory | RelevantMemoryOptions): MemoryFeature {
  const m = manager instanceof RelevantMemory ? manager : new RelevantMemory(manager);
  const middleware: PromptMiddleware = {
    name: 'relevant-memory',
    placement: 'system',
    recall: true,
    ...(m.autoRetrieve ? { prefetch: (ctx: PrefetchContext) => m.rank(ctx.scope, ctx.userMessage) } : {}),
    async inject(ctx) {
      if (!m.autoRetrieve) return EMPTY_RESULT;
      const ranked = await ((ctx.prefetched as ReturnType<RelevantMemory['rank']> | undefined) ??
        m.rank(ctx.scope, ctx.userMessage));
      // Lines are numbered by their place in the block, so a line's number is known only when offered.
      const fitter = new LineFitter(ctx.tokenizer, ctx.maxTokens, renderMemories, MEMORIES_FRAME);
      for (const memory of ranked.selected) {
        fitter.offer({ id: memory.id, line: formatMemoryLine(fitter.included.length + 1, memory) });
      }
      const block = fitter.finish();
      return {
        messages: block.message ? [block.message] : [],
        included: block.included.length,
        dropped: [
          ...block.dropped,
          ...droppedAs('limit', ranked.overLimit),
          ...droppedAs('irrelevant', ranked.belowThreshold),
        ],
      };
    },
    async afterTurn(ctx) {
      if (!m.autoStore) return;
      const user = ctx.messages.find((msg) => msg.role === 'user');
      const answer = finalAnswer(ctx.messages);
      if (!user?.content.trim() || !answer?.content.trim()) return;
      await m.storeInteraction(ctx.scope, user.content, answer.content, {
        metadata: { turnIndex: ctx.turnIndex },
      });
    },
  };
  return { name: 'relevant-memory', middleware };
}
