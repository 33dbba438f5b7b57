import type { ChatMessage, ChatModel, Conversation, TurnLedger } from '@kioku/core';

export interface AgentTurnOptions {
  conversation: Conversation;
  model: ChatModel;
  userMessage: string;
  /** Model calls before the loop gives up on tool calls (default 8). */
  maxSteps?: number;
  signal?: AbortSignal;
  /** Streamed content deltas (works with `OpenAIChatModel`; other models simply do not call it). */
  onToken?: (text: string) => void;
}

export interface AgentTurnResult {
  /** The final answer; empty when the step limit came first. */
  answer: string;
  ledger: TurnLedger;
  /** What the turn added to the transcript: the user message, assistant messages, tool results. */
  messages: ChatMessage[];
  steps: number;
  stepLimitReached: boolean;
}

/**
 * One agent turn through Kioku's pipeline: prepare the prompt within the budget, call the model, run its
 * tool calls in the user's scope (large outputs offloaded), loop until it answers or `maxSteps`, record
 * the turn. If the model call fails, the steps so far are recorded before the error is thrown.
 *
 * @deprecated The same as `conversation.run(userMessage, model, { maxSteps, signal, onToken })`, which
 * returns the same result; kept for code written against 0.1.
 */
export async function runAgentTurn(options: AgentTurnOptions): Promise<AgentTurnResult> {
  const { conversation, model, userMessage, maxSteps, signal, onToken } = options;
  return conversation.run(userMessage, model, {
    ...(maxSteps === undefined ? {} : { maxSteps }),
    ...(signal ? { signal } : {}),
    ...(onToken ? { onToken } : {}),
  });
}
