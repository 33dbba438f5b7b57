import { type ChatMessage, type ToolCall, ValidationError } from '@kioku/core';
import type OpenAI from 'openai';

type OpenAIMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type OpenAIAssistantMessage = OpenAI.Chat.Completions.ChatCompletionMessage;

/** Kioku's transcript messages → Chat Completions messages (tool calls and tool results included). */
export function toOpenAIMessages(messages: readonly ChatMessage[]): OpenAIMessage[] {
  return messages.map(toOpenAIMessage);
}

export function toOpenAIMessage(message: ChatMessage): OpenAIMessage {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return { role: 'user', content: message.content };
    case 'assistant': {
      const calls = message.toolCalls ?? [];
      if (calls.length === 0) return { role: 'assistant', content: message.content };
      return {
        role: 'assistant',
        // Some servers reject an empty string next to tool calls; null is what OpenAI itself sends.
        content: message.content === '' ? null : message.content,
        tool_calls: calls.map((call) => ({
          id: call.id,
          type: 'function' as const,
          function: { name: call.name, arguments: call.arguments },
        })),
      };
    }
    case 'tool':
      if (!message.toolCallId) {
        throw new ValidationError('A tool message needs the toolCallId of the call it answers.');
      }
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  }
}

/** A Chat Completions assistant message → Kioku's assistant message. */
export function fromOpenAIMessage(message: OpenAIAssistantMessage): ChatMessage {
  const calls: ToolCall[] = [];
  for (const call of message.tool_calls ?? []) {
    if (call.type !== 'function') continue;
    calls.push({ id: call.id, name: call.function.name, arguments: call.function.arguments || '{}' });
  }
  return {
    role: 'assistant',
    content: message.content ?? message.refusal ?? '',
    ...(calls.length > 0 ? { toolCalls: calls } : {}),
  };
}

/** Assembles a streamed reply: content deltas appended, tool-call deltas merged by their index. */
export class StreamAssembler {
  #content = '';
  readonly #calls = new Map<number, { id: string; name: string; arguments: string }>();

  /** Feed one chunk's delta; returns the content text it added (possibly empty). */
  push(delta: OpenAI.Chat.Completions.ChatCompletionChunk.Choice.Delta | undefined): string {
    if (!delta) return '';
    const text = delta.content ?? '';
    this.#content += text;
    for (const part of delta.tool_calls ?? []) {
      const call = this.#calls.get(part.index) ?? { id: '', name: '', arguments: '' };
      if (part.id) call.id = part.id;
      if (part.function?.name) call.name += part.function.name;
      if (part.function?.arguments) call.arguments += part.function.arguments;
      this.#calls.set(part.index, call);
    }
    return text;
  }

  message(): ChatMessage {
    const calls = [...this.#calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, call]) => ({
        id: call.id || `call_${index}`,
        name: call.name,
        arguments: call.arguments || '{}',
      }));
    return { role: 'assistant', content: this.#content, ...(calls.length > 0 ? { toolCalls: calls } : {}) };
  }
}
