import type { Kioku } from '@kioku/core';
import {
  KiokuGraphMemory,
  THREAD_METADATA_KEY as LANGGRAPH_THREAD,
  messageText,
  toChatMessages,
} from '@kioku/langgraph';
import type { OpenAIChatModel } from '@kioku/openai';
import { isHumanMessage } from '@langchain/core/messages';
import { GraphRecursionError, MemorySaver } from '@langchain/langgraph';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { ChatOpenAI } from '@langchain/openai';
import type { TurnRunner } from './ai-sdk-turns.js';
import { apiKeyOf, MAX_STEPS, threadOf } from './framework-thread.js';

/**
 * Turns run by a LangGraph `createReactAgent` with `@kioku/langgraph`'s `KiokuGraphMemory` — Kioku's
 * context as the agent's `prompt`, the turn recorded by its `postModelHook`, Kioku's tools as LangChain
 * tools — and LangChain's `ChatOpenAI` on the demo's endpoint and model. The user comes from the chat's
 * scope through the run's `configurable`, never from the model.
 */
export function langgraphTurns(kioku: Kioku, model: OpenAIChatModel, agentId: string): TurnRunner {
  const memory = new KiokuGraphMemory({ kioku, agentId });
  const llm = new ChatOpenAI({
    model: model.model,
    apiKey: apiKeyOf(model),
    configuration: { baseURL: model.client.baseURL },
  });
  const agent = createReactAgent({
    llm,
    tools: memory.tools,
    prompt: memory.prompt,
    postModelHook: memory.record,
    checkpointer: new MemorySaver(),
  });
  return {
    label: `LangGraph (createReactAgent with @kioku/langgraph, ${model.model} through @langchain/openai)`,
    async run(conversation, message, { signal }) {
      const config = {
        configurable: {
          user_id: conversation.scope.userId,
          thread_id: await threadOf(kioku, conversation, LANGGRAPH_THREAD),
        },
        signal,
        // model and tool nodes per step, and the post-model hook
        recursionLimit: MAX_STEPS * 3,
      };
      let state: { messages: Parameters<typeof toChatMessages>[0] };
      let stepLimitReached = false;
      try {
        state = await agent.invoke({ messages: [{ role: 'user', content: message }] }, config);
      } catch (error) {
        if (!(error instanceof GraphRecursionError)) throw error;
        stepLimitReached = true;
        state = (await agent.getState(config)).values as typeof state;
      }
      const at = state.messages.findLastIndex((m) => isHumanMessage(m));
      const turn = state.messages.slice(Math.max(0, at));
      const ledger = await memory.ledger(config);
      return {
        answer: stepLimitReached ? '' : messageText(turn.at(-1)!),
        messages: toChatMessages(turn),
        ...(ledger ? { ledger } : {}),
        stepLimitReached,
      };
    },
  };
}
