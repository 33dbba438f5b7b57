import type { TranscriptInput } from '../sessions/record.js';
import type { Tokenizer } from '../tokenizer.js';
import type { OpenAIToolDefinition } from '../toolkit/tool.js';

/**
 * A chat message in Kioku's framework-neutral shape (the same shape the session transcript stores):
 * `system`, `user`, `assistant` (optionally with `toolCalls`) and `tool` (answering `toolCallId`).
 */
export type ChatMessage = TranscriptInput;

export type ToolCallRequest = NonNullable<ChatMessage['toolCalls']>[number];

/** Tokens a message adds to a prompt beyond its text (role, separators), as OpenAI's chat format counts. */
export const MESSAGE_OVERHEAD_TOKENS = 4;

/** Tokens of one message: its content, tool-call names and arguments, plus the per-message overhead. */
export function countMessageTokens(tokenizer: Tokenizer, message: ChatMessage): number {
  let tokens = MESSAGE_OVERHEAD_TOKENS + tokenizer.count(message.content);
  for (const call of message.toolCalls ?? [])
    tokens += tokenizer.count(call.name) + tokenizer.count(call.arguments);
  return tokens;
}

export function countMessagesTokens(tokenizer: Tokenizer, messages: readonly ChatMessage[]): number {
  let total = 0;
  for (const message of messages) total += countMessageTokens(tokenizer, message);
  return total;
}

/**
 * Tokens of the tool definitions sent with a request: each definition as the JSON the request carries
 * (name, description, parameter schema). Providers render them into the prompt in their own format, so this
 * is an estimate of the same size, counted with the same tokenizer as the messages.
 */
export function countToolsTokens(tokenizer: Tokenizer, tools: readonly OpenAIToolDefinition[]): number {
  let total = 0;
  for (const tool of tools) total += tokenizer.count(JSON.stringify(tool.function));
  return total;
}
