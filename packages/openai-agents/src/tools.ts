import { randomUUID } from 'node:crypto';
import type { Conversation } from '@kioku/core';
import { type FunctionTool, type Tool, tool } from '@openai/agents';

type NonStrictSchema = {
  type: 'object';
  properties: Record<string, unknown>;
  required: string[];
  additionalProperties: true;
};

/**
 * Kioku's memory tools for the conversation (the features' toolkits: the user's facts, plan mode, working
 * memory, offload …) as Agents SDK function tools. Each call runs through `conversation.executeToolCalls`:
 * in the conversation's scope (never a user named in the arguments or the run context), validated by Kioku,
 * mistakes answered to the model as coded JSON errors, and the output passed through the features' output
 * processors, so a large output is offloaded behind a `[MemoryRef: …]` when offload is on. The parameter
 * schemas are exactly the ones Kioku's budget counts (non-strict: some arguments are optional).
 */
export function kiokuTools(conversation: Conversation): FunctionTool[] {
  return conversation.tools.map((definition) => {
    const { name, description, parameters } = definition.function;
    return tool({
      name,
      description,
      parameters: parameters as unknown as NonStrictSchema,
      strict: false,
      async execute(input, _context, details) {
        const call = {
          id: details?.toolCall?.callId ?? `call_${randomUUID()}`,
          name,
          arguments: JSON.stringify(input ?? {}),
        };
        const signal = details?.signal;
        const [result] = await conversation.executeToolCalls([call], signal ? { signal } : {});
        return result?.content ?? '';
      },
    }) as unknown as FunctionTool;
  });
}

/**
 * The app's own tools with their outputs passed through the conversation's output processors
 * (`conversation.processToolOutput`): with offload on, an output over the threshold is stored in the
 * user's detail memory and the model gets the `[MemoryRef: …]` placeholder and a summary instead; it reads
 * the whole output back with `retrieve_memory`. Tools other than function tools are left as they are.
 */
export function offloadTools<T extends Tool>(conversation: Conversation, tools: readonly T[]): T[] {
  return tools.map((original) => {
    if (original.type !== 'function') return original;
    const fn = original as unknown as FunctionTool;
    const wrapped: FunctionTool = {
      ...fn,
      async invoke(runContext, input, details) {
        const output = await fn.invoke(runContext, input, details);
        const text = typeof output === 'string' ? output : JSON.stringify(output ?? null);
        const call = {
          id: details?.toolCall?.callId ?? `call_${randomUUID()}`,
          name: fn.name,
          arguments: input,
        };
        const processed = await conversation.processToolOutput(call, text);
        return processed === text ? output : processed;
      },
    };
    return wrapped as unknown as T;
  });
}
