import type { OpenAIToolDefinition } from '../toolkit/tool.js';
import type { ChatMessage } from './messages.js';

export interface ChatModelRequest {
  messages: ChatMessage[];
  tools: OpenAIToolDefinition[];
  signal?: AbortSignal;
}

/** The one thing the turn runner needs from a model: the next assistant message (possibly with tool calls). */
export interface ChatModel {
  complete(request: ChatModelRequest): Promise<ChatMessage>;
}
