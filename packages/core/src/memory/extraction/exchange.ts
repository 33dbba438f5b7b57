import type { ChatMessage } from '../../model/messages.js';

/** One exchange: what the user said, and the assistant's final answer to it (when it gave one). */
export interface Exchange {
  /** What the user said. */
  user: string;
  /** The assistant's final answer to it, when it gave one. */
  answer?: string;
}

/**
 * The last exchange in a turn's (or a whole prompt's) messages: the last `user` message and the last
 * `assistant` message after it that answers rather than calls tools. Nothing else is taken — not the
 * system prompt, not memory blocks (system messages), not tool calls or tool results (where recalled
 * memories and tool schemas live), not replayed history — so a memory pass never learns what memory
 * itself put into the prompt. Null when there is no user message with text.
 */
export function lastExchange(messages: readonly ChatMessage[]): Exchange | null {
  let userIndex = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === 'user') {
      userIndex = i;
      break;
    }
  }
  if (userIndex === -1) return null;
  const user = messages[userIndex]!.content.trim();
  if (user === '') return null;
  for (let i = messages.length - 1; i > userIndex; i--) {
    const m = messages[i]!;
    if (m.role === 'assistant' && !m.toolCalls?.length && m.content.trim() !== '') {
      return { user, answer: m.content.trim() };
    }
  }
  return { user };
}
