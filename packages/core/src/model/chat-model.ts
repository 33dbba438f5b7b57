import type { ChatMessage } from './messages.js';
import type { OpenAIToolDefinition } from './tool.js';

export interface ChatModelRequest {
  messages: ChatMessage[];
  tools: OpenAIToolDefinition[];
  signal?: AbortSignal;
  /** Streamed content deltas of the reply, for models that stream (others never call it). */
  onToken?: (text: string) => void;
}

/** Tokens one or more model calls spent. `estimated` when Kioku counted them because the model reported none. */
export interface ModelUsage {
  inputTokens: number;
  outputTokens: number;
  estimated?: boolean;
}

/** An assistant message, with the tokens the call spent when the model reports them. */
export type ChatModelReply = ChatMessage & { usage?: ModelUsage };

/** A request for a JSON reply that conforms to `jsonSchema` (see `ChatModel.completeJson`). */
export interface JsonCompletionRequest {
  messages: ChatMessage[];
  /** The JSON Schema of the wanted object (generated from a zod schema). */
  jsonSchema: Record<string, unknown>;
  /** A short name of the schema (letters, digits, `_` and `-` are safest). */
  schemaName: string;
  signal?: AbortSignal;
}

/** The raw JSON text of a structured reply; validation is the caller's (core's `generateObject`). */
export interface JsonCompletion {
  text: string;
  usage?: ModelUsage;
}

/** The one thing the turn runner needs from a model: the next assistant message (possibly with tool calls). */
export interface ChatModel {
  /** The model's name (e.g. `gpt-4.1-mini`), for telemetry: the `gen_ai.request.model` of its calls. */
  readonly modelId?: string;
  /** Who serves it (e.g. `openai`), for telemetry: `gen_ai.provider.name`. */
  readonly provider?: string;
  complete(request: ChatModelRequest): Promise<ChatModelReply>;
  /**
   * Optional native structured output (a JSON-schema response format, JSON mode or a forced tool call).
   * `generateObject` uses it when present; without it, it asks `complete` with the schema in the prompt.
   */
  completeJson?(request: JsonCompletionRequest): Promise<JsonCompletion>;
}
