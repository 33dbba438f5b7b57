import type { ChatMessage } from '@kioku/core';
import type { BaseMessage } from '@langchain/core/messages';

/** The text of a LangChain message's content (a string, or the text parts of a list). */
export function messageText(message: BaseMessage): string {
  const { content } = message;
  if (typeof content === 'string') return content;
  return content
    .map((part) => (typeof part === 'string' ? part : part.type === 'text' ? String(part.text ?? '') : ''))
    .filter((text) => text !== '')
    .join('\n');
}

export function isHuman(message: BaseMessage): boolean {
  return message.getType() === 'human';
}

/** Whether the message is the model's final answer of a turn (an AI message that calls no tool). */
export function isFinalAnswer(message: BaseMessage | undefined): boolean {
  if (message?.getType() !== 'ai') return false;
  const calls = (message as { tool_calls?: unknown[] }).tool_calls;
  return !calls || calls.length === 0;
}

/**
 * Kioku's messages (the transcript's shape) for LangChain messages: human, AI (with its tool calls), tool
 * results and system messages; other kinds are left out.
 */
export function toChatMessages(messages: readonly BaseMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const message of messages) {
    const type = message.getType();
    if (type === 'human') out.push({ role: 'user', content: messageText(message) });
    else if (type === 'system') out.push({ role: 'system', content: messageText(message) });
    else if (type === 'ai') {
      const calls =
        (message as { tool_calls?: Array<{ id?: string; name: string; args: unknown }> }).tool_calls ?? [];
      out.push({
        role: 'assistant',
        content: messageText(message),
        ...(calls.length > 0
          ? {
              toolCalls: calls.map((call, i) => ({
                id: call.id ?? `call_${i}`,
                name: call.name,
                arguments: JSON.stringify(call.args ?? {}),
              })),
            }
          : {}),
      });
    } else if (type === 'tool') {
      const tool = message as BaseMessage & { tool_call_id: string; name?: string };
      out.push({
        role: 'tool',
        content: messageText(message),
        toolCallId: tool.tool_call_id,
        ...(tool.name ? { name: tool.name } : {}),
      });
    }
  }
  return out;
}
