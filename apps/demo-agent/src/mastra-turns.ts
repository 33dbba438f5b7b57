import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { Kioku } from '@kioku/core';
import { KiokuMastraMemory, THREAD_METADATA_KEY as MASTRA_THREAD } from '@kioku/mastra';
import type { OpenAIChatModel } from '@kioku/openai';
import { Agent } from '@mastra/core/agent';
import { createTool } from '@mastra/core/tools';
import type { TurnRunner } from './ai-sdk-turns.js';
import { apiKeyOf, MAX_STEPS, threadOf } from './framework-thread.js';

/**
 * Turns run by a Mastra `Agent` whose memory is `@kioku/mastra`'s `KiokuMastraMemory` (the chat's user is
 * Mastra's resource), on the demo's endpoint and model through `@ai-sdk/openai-compatible`; Kioku's tools
 * (memory, plans, sandbox …) as Mastra tools, run in the Kioku conversation of the agent's thread.
 */
export function mastraTurns(kioku: Kioku, model: OpenAIChatModel, agentId: string): TurnRunner {
  const memory = new KiokuMastraMemory({ kioku, agentId });
  const provider = createOpenAICompatible({
    name: 'openai',
    baseURL: model.client.baseURL,
    apiKey: apiKeyOf(model),
  });
  const definitions = kioku.features.flatMap((f) => f.toolkit?.tools ?? []);
  const tools = Object.fromEntries(
    [...new Map(definitions.map((d) => [d.name, d])).values()].map((d) => [
      d.name,
      createTool({
        id: d.name,
        description: d.description,
        inputSchema: d.parameters,
        // In the conversation of the run's resource and thread, as Mastra's agent names them.
        execute: async (input, context) => {
          const run = context.agent;
          if (!run?.resourceId || !run.threadId) throw new Error(`${d.name} runs only in an agent's thread.`);
          const conversation = await memory.conversation(run.resourceId, run.threadId);
          const [result] = await conversation.executeToolCalls([
            { id: run.toolCallId, name: d.name, arguments: JSON.stringify(input ?? {}) },
          ]);
          return result?.content ?? '';
        },
      }),
    ]),
  );
  const agent = new Agent({
    id: 'kioku-demo',
    name: 'Kioku demo agent',
    // Kioku's system prompt and memory blocks come from the memory's input processor.
    instructions: '',
    model: provider.chatModel(model.model),
    memory,
    tools,
  });
  return {
    label: `Mastra (an Agent with @kioku/mastra, ${model.model} through @ai-sdk/openai-compatible)`,
    async run(conversation, message, { signal }) {
      const thread = {
        resource: conversation.scope.userId,
        thread: await threadOf(kioku, conversation, MASTRA_THREAD),
      };
      const result = await agent.generate(message, {
        memory: thread,
        abortSignal: signal,
        maxSteps: MAX_STEPS,
      });
      const ledger = await memory.ledger(thread.resource, thread.thread);
      const calls = result.steps.flatMap((s) => s.toolCalls ?? []);
      const results = result.steps.flatMap((s) => s.toolResults ?? []);
      return {
        answer: result.text,
        messages: [
          { role: 'user', content: message },
          ...calls.map((c) => ({
            role: 'assistant' as const,
            content: '',
            toolCalls: [
              {
                id: c.payload.toolCallId,
                name: c.payload.toolName,
                arguments: JSON.stringify(c.payload.args ?? {}),
              },
            ],
          })),
          ...results.map((r) => ({
            role: 'tool' as const,
            toolCallId: r.payload.toolCallId,
            content: String(r.payload.result ?? ''),
          })),
          { role: 'assistant', content: result.text },
        ],
        ...(ledger ? { ledger } : {}),
        stepLimitReached: result.finishReason === 'tool-calls',
      };
    },
  };
}
