/*
 * `@kioku/core/model`: for the authors of model providers and framework adapters — structured output over
 * any `ChatModel`, tool definitions in OpenAI's shape and their execution in a scope, the versions a model
 * was shown, token counts of messages and tools, the tokenizers, and what Kioku adds to a system prompt.
 */

export { MEMORY_NOTICE } from './memory/trust/fence.js';
export type { JsonCompletion, JsonCompletionRequest } from './model/chat-model.js';
export { executeToolCall, type ToolResult } from './model/execute-tool.js';
export { ChatMessageSchema, countMessagesTokens, countToolsTokens } from './model/messages.js';
export { SeenVersions } from './model/seen-versions.js';
export {
  type GenerateObjectRequest,
  type GenerateObjectResult,
  generateObject,
  toJsonSchema,
  type UsageEntry,
  UsageLedger,
  withJsonInstruction,
} from './model/structured.js';
export { type OpenAIToolDefinition, toOpenAITool } from './model/tool.js';
export { type ToolCallTracer, traceToolCalls } from './model/tool-call-telemetry.js';
export { memoizedTokenizer, o200kTokenizer } from './tokens/tokenizer.js';
