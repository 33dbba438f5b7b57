import type { MemoryFeature } from '../../turn/feature.js';
import { type ChatMessage, countMessageTokens } from '../../turn/messages.js';
import { type DroppedItem, EMPTY_RESULT, type PromptMiddleware } from '../../turn/middleware.js';
import { formatMemoryLine, MEMORIES_HEADER } from './format.js';
import { MemoryManager, type MemoryManagerOptions } from './manager.js';
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
 * Agentflow's memory callbacks as a turn feature: before the turn (when `autoRetrieve`) the memories
 * relevant to the user message are injected as "Relevant memories from past interactions:"; after it
 * (when `autoStore`) the exchange is stored. Middleware name `memory-manager`.
 */
export function memoryManager(manager: MemoryManager | MemoryManagerOptions): MemoryFeature {
  const m = manager instanceof MemoryManager ? manager : new MemoryManager(manager);
  const middleware: PromptMiddleware = {
    name: 'memory-manager',
    placement: 'system',
    async inject(ctx) {
      if (!m.autoRetrieve) return EMPTY_RESULT;
      const ranked = await m.rank(ctx.scope, ctx.userMessage);
      let content = MEMORIES_HEADER;
      let included = 0;
      const dropped: DroppedItem[] = [];
      for (const memory of ranked.selected) {
        const next = `${content}\n${formatMemoryLine(included + 1, memory)}`;
        const tokens = countMessageTokens(ctx.tokenizer, { role: 'system', content: next });
        if (tokens <= ctx.maxTokens) {
          content = next;
          included++;
        } else {
          const line = formatMemoryLine(included + 1, memory);
          dropped.push({ id: memory.id, reason: 'budget', tokens: ctx.tokenizer.count(line) + 1 });
        }
      }
      dropped.push(
        ...droppedAs('limit', ranked.overLimit),
        ...droppedAs('irrelevant', ranked.belowThreshold),
      );
      const messages: ChatMessage[] = included > 0 ? [{ role: 'system', content }] : [];
      return { messages, included, dropped };
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
  return { name: 'memory-manager', middleware };
}
