import { z } from 'zod';
import { LIMITS } from '../foundation/limits.js';
import type { Tokenizer } from '../tokens/tokenizer.js';
import type { OpenAIToolDefinition } from './tool.js';

const MessageTextSchema = z
  .string()
  .max(LIMITS.sessionValueChars, `value is larger than the ${LIMITS.sessionValueChars}-character limit`);

/** A tool call an assistant message made. */
export const ToolCallSchema = z.object({
  id: z.string().min(1).max(256),
  name: z.string().min(1).max(256),
  /** JSON-encoded arguments, exactly as the model produced them. */
  arguments: MessageTextSchema,
});

export type ToolCall = z.infer<typeof ToolCallSchema>;

export const ChatRoleSchema = z.enum(['system', 'user', 'assistant', 'tool']);

/**
 * A chat message in Kioku's framework-neutral shape (the same shape the session transcript stores):
 * `system`, `user`, `assistant` (optionally with `toolCalls`) and `tool` (answering `toolCallId`).
 */
export const ChatMessageSchema = z.object({
  role: ChatRoleSchema,
  content: MessageTextSchema,
  /** Tool calls an assistant message made. */
  toolCalls: z.array(ToolCallSchema).max(128).optional(),
  /** For a `tool` message: the call it answers. */
  toolCallId: z.string().min(1).max(256).optional(),
  name: z.string().max(256).optional(),
});

export type ChatMessage = z.input<typeof ChatMessageSchema>;

/** Tokens a message adds to a prompt beyond its text (role, separators), as OpenAI's chat format counts. */
export const MESSAGE_OVERHEAD_TOKENS = 4;

/**
 * Counts that whoever built a message already knows exactly (a block's fitter counts the block it
 * renders), so the runner's check of every injected message does not count a new block a second time. Kept
 * per message object with the tokenizer and the content it was counted with: a message whose content was
 * replaced, or counted with another tokenizer, is counted again.
 */
const knownCounts = new WeakMap<ChatMessage, { tokenizer: Tokenizer; content: string; tokens: number }>();

/** Records that `message` (no tool calls) is `tokens` tokens as `countMessageTokens` counts it. */
export function rememberMessageTokens(tokenizer: Tokenizer, message: ChatMessage, tokens: number): void {
  if (message.toolCalls === undefined)
    knownCounts.set(message, { tokenizer, content: message.content, tokens });
}

/** Tokens of one message: its content, tool-call names and arguments, plus the per-message overhead. */
export function countMessageTokens(tokenizer: Tokenizer, message: ChatMessage): number {
  const known = knownCounts.get(message);
  if (
    known !== undefined &&
    known.tokenizer === tokenizer &&
    known.content === message.content &&
    message.toolCalls === undefined
  )
    return known.tokens;
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
