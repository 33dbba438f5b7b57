import type { ChatMessage, ChatModel, ChatModelRequest } from '@kioku/core';

/** One scripted reply; it may read the prompt Kioku built (that is how the tour shows recall). */
export type ScriptedStep = (request: ChatModelRequest) => ChatMessage;

let callCounter = 0;

/** A stand-in for an LLM: replies are pre-written, in order. Used only by the offline tour. */
export class ScriptedModel implements ChatModel {
  readonly #steps: ScriptedStep[] = [];

  /** Queue replies for the next model calls. */
  script(...steps: ScriptedStep[]): void {
    this.#steps.push(...steps);
  }

  async complete(request: ChatModelRequest): Promise<ChatMessage> {
    const step = this.#steps.shift();
    if (!step) throw new Error('The scripted model has no reply left.');
    return step(request);
  }
}

export const say =
  (content: string | ((request: ChatModelRequest) => string)): ScriptedStep =>
  (request) => ({ role: 'assistant', content: typeof content === 'string' ? content : content(request) });

export const call =
  (
    name: string,
    args: Record<string, unknown> | ((request: ChatModelRequest) => Record<string, unknown>),
  ): ScriptedStep =>
  (request) => ({
    role: 'assistant',
    content: '',
    toolCalls: [
      {
        id: `call_${++callCounter}`,
        name,
        arguments: JSON.stringify(typeof args === 'function' ? args(request) : args),
      },
    ],
  });

/** The last tool result in the prompt. */
export function lastToolResult(request: ChatModelRequest): string {
  return request.messages.findLast((m) => m.role === 'tool')?.content ?? '';
}

/** Everything Kioku injected before the user message (system prompt, memory blocks). */
export function injectedText(request: ChatModelRequest): string {
  return request.messages
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .join('\n');
}

/** The system message Kioku injected that starts with `marker` (a block's header), or ''. */
export function injectedBlock(request: ChatModelRequest, marker: string): string {
  return request.messages.find((m) => m.role === 'system' && m.content.startsWith(marker))?.content ?? '';
}
