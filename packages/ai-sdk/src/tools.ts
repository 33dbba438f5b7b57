import type { Conversation } from '@kioku/core';
import { parseMemoryRef } from '@kioku/core/adapter';
import { type JSONSchema7, jsonSchema, type Tool, type ToolExecutionOptions, type ToolSet, tool } from 'ai';

/**
 * Kioku's memory tools for the conversation (the features' toolkits: the user's facts, plan mode, working
 * memory, offload …) as AI SDK tools. Each call runs through `conversation.executeToolCalls`: in the
 * conversation's scope (never a user named in the arguments), validated by Kioku, with mistakes answered
 * to the model as coded JSON errors, and the output passed through the features' output processors, so a
 * large output is offloaded behind a `[MemoryRef: …]` when offload is on. The schemas are exactly the ones
 * Kioku's budget counts.
 */
export function kiokuTools(conversation: Conversation): ToolSet {
  const tools: ToolSet = {};
  for (const definition of conversation.tools) {
    const { name, description, parameters } = definition.function;
    tools[name] = tool({
      description,
      // Kioku validates the arguments itself and answers the model with a coded error it can correct.
      inputSchema: jsonSchema<Record<string, unknown>>(parameters as JSONSchema7),
      async execute(input: Record<string, unknown>, options: ToolExecutionOptions): Promise<string> {
        const call = { id: options.toolCallId, name, arguments: JSON.stringify(input ?? {}) };
        const signal = options.abortSignal;
        const [result] = await conversation.executeToolCalls([call], signal ? { signal } : {});
        return result?.content ?? '';
      },
    });
  }
  return tools;
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

/**
 * The app's own tools with their outputs passed through the conversation's output processors
 * (`conversation.processToolOutput`): with offload on, an output over the threshold is stored in the
 * user's detail memory and the model, and the step's results, get the `[MemoryRef: …]` placeholder and a
 * summary instead; the model reads the whole output back with `retrieve_memory`. Outputs that stream
 * (an `AsyncIterable`) and tools without `execute` are left as they are.
 */
export function offloadTools<T extends ToolSet>(conversation: Conversation, tools: T): T {
  const out: ToolSet = {};
  for (const [name, original] of Object.entries(tools)) {
    const execute = original.execute;
    if (!execute) {
      out[name] = original;
      continue;
    }
    const wrapped: Tool = {
      ...original,
      async execute(input: unknown, options: ToolExecutionOptions) {
        const output = await execute(input, options);
        if (isAsyncIterable(output)) return output;
        const text = typeof output === 'string' ? output : JSON.stringify(output ?? null);
        const call = { id: options.toolCallId, name, arguments: JSON.stringify(input ?? {}) };
        const processed = await conversation.processToolOutput(call, text);
        return processed === text ? output : processed;
      },
    };
    const toModelOutput = original.toModelOutput;
    if (toModelOutput) {
      // The tool's own conversion expects its own output, never the placeholder that replaced it.
      wrapped.toModelOutput = (options) =>
        typeof options.output === 'string' && parseMemoryRef(options.output)
          ? { type: 'text', value: options.output }
          : toModelOutput(options);
    }
    out[name] = wrapped;
  }
  return out as T;
}
