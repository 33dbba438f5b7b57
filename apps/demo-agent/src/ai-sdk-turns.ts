import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { type KiokuMemory, kiokuMemory, toChatMessages } from '@kioku/ai-sdk';
import type { Conversation, TurnResult } from '@kioku/core';
import type { OpenAIChatModel } from '@kioku/openai';
import { stepCountIs, streamText, wrapLanguageModel } from 'ai';

/** Runs one chat turn of a conversation; `conversation.run` with the demo's model unless a framework does. */
export interface TurnRunner {
  /** Shown at start: what runs the turns. */
  label: string;
  run(
    conversation: Conversation,
    message: string,
    options: { signal: AbortSignal; onToken: (text: string) => void },
  ): Promise<
    Pick<TurnResult, 'answer' | 'messages' | 'stepLimitReached'> & Partial<Pick<TurnResult, 'ledger'>>
  >;
}

const MAX_STEPS = 8;

/**
 * Turns run by the Vercel AI SDK (`streamText` with `@kioku/ai-sdk`'s middleware and tools) against the
 * same endpoint and model as the demo's `OpenAIChatModel`, instead of core's `conversation.run`.
 */
export function aiSdkTurns(model: OpenAIChatModel): TurnRunner {
  const provider = createOpenAICompatible({
    name: 'openai',
    baseURL: model.client.baseURL,
    ...(model.client.apiKey ? { apiKey: model.client.apiKey } : {}),
  });
  const memories = new WeakMap<Conversation, KiokuMemory>();
  return {
    label: `the AI SDK (streamText, ${model.model} through @ai-sdk/openai-compatible)`,
    async run(conversation, message, { signal, onToken }) {
      let memory = memories.get(conversation);
      if (!memory) {
        memory = kiokuMemory(conversation);
        memories.set(conversation, memory);
      }
      let failure: unknown;
      try {
        const result = streamText({
          model: wrapLanguageModel({ model: provider.chatModel(model.model), middleware: memory.middleware }),
          tools: memory.tools,
          prompt: message,
          stopWhen: stepCountIs(MAX_STEPS),
          abortSignal: signal,
          onError: ({ error }) => {
            failure ??= error;
          },
        });
        for await (const delta of result.textStream) onToken(delta);
        if (failure) throw failure;
        const response = await result.response;
        return {
          answer: await result.text,
          messages: [{ role: 'user', content: message }, ...toChatMessages(response.messages)],
          ledger: memory.ledger!,
          stepLimitReached: (await result.finishReason) === 'tool-calls',
        };
      } finally {
        // A turn cut at the step limit, or by an error, is recorded as far as it got (as conversation.run does).
        await memory.flush();
      }
    },
  };
}
