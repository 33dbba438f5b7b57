import type { ChatMessage, Conversation, PreparedTurn, TurnLedger } from '@kioku/core';
import type { OpenAIToolDefinition } from '@kioku/core/model';
import type { LanguageModelMiddleware, ToolSet } from 'ai';
import {
  assistantMessage,
  type PromptMessage,
  type PromptPart,
  toChatMessages,
  toPromptMessages,
} from './messages.js';
import { kiokuTools, offloadTools } from './tools.js';

/** The call options of a language-model call, as far as the middleware reads them (v3 and v4 alike). */
interface CallOptions {
  prompt: PromptMessage[];
  tools?: ReadonlyArray<{ type: string; name: string; description?: string; inputSchema?: unknown }>;
  abortSignal?: AbortSignal;
}

interface Turn {
  userMessage: string;
  prepared: PreparedTurn;
  /** What the turn has produced so far, from the user message on. */
  messages: ChatMessage[];
  recorded: boolean;
}

interface Step {
  turn: Turn;
  /** The turn's messages before this model call. */
  messages: ChatMessage[];
}

/**
 * Kioku's memory for one conversation in the AI SDK: `middleware` for `wrapLanguageModel`, `tools` for
 * `generateText` / `streamText`, `wrapTools` for the app's own tools. One turn at a time per conversation.
 */
export class KiokuMemory {
  readonly conversation: Conversation;
  /** Kioku's memory tools (see `kiokuTools`); pass them to `generateText` / `streamText`. */
  readonly tools: ToolSet;
  /**
   * The language-model middleware: before each model call it puts Kioku's system prompt, memory blocks
   * and replayed turns into the prompt (prepared once per user message, within one token budget that also
   * pays for the app's own messages and tools), and once the model answers without tool calls it records
   * the turn in the session transcript. Streams pass through unchanged.
   */
  readonly middleware: LanguageModelMiddleware;
  #turn: Turn | undefined;
  readonly #steps = new WeakMap<object, Step>();

  constructor(conversation: Conversation) {
    this.conversation = conversation;
    this.tools = kiokuTools(conversation);
    this.middleware = {
      specificationVersion: 'v3',
      transformParams: async ({ params }) =>
        (await this.#transform(params as unknown as CallOptions)) as unknown as typeof params,
      wrapGenerate: async ({ doGenerate, params }) => {
        const result = await doGenerate();
        const step = this.#steps.get(params);
        if (step) await this.#afterStep(step, assistantMessage(result.content as unknown as PromptPart[]));
        return result;
      },
      wrapStream: async ({ doStream, params }) => {
        const result = await doStream();
        const step = this.#steps.get(params);
        if (!step) return result;
        let text = '';
        const calls: PromptPart[] = [];
        const stream = result.stream.pipeThrough(
          new TransformStream({
            transform: (part, controller) => {
              if (part.type === 'text-delta') text += part.delta;
              else if (part.type === 'tool-call') calls.push(part as unknown as PromptPart);
              controller.enqueue(part);
            },
            // Runs once the model's stream has ended: the reply is complete, so the turn may be recorded.
            flush: () => this.#afterStep(step, assistantMessage([{ type: 'text', text }, ...calls])),
          }),
        );
        return { ...result, stream };
      },
    };
  }

  /** The ledger of the turn prepared last: the budget, what each feature injected and what it dropped. */
  get ledger(): TurnLedger | undefined {
    return this.#turn?.prepared.ledger;
  }

  /** The app's own tools, their large outputs offloaded to detail memory (see `offloadTools`). */
  wrapTools<T extends ToolSet>(tools: T): T {
    return offloadTools(this.conversation, tools);
  }

  /**
   * Record a turn that ended without a final answer (the tool loop stopped at a tool call, or the call
   * failed). This happens by itself when the next turn starts; call it when there is none.
   */
  async flush(): Promise<void> {
    const turn = this.#turn;
    if (!turn || turn.recorded) return;
    turn.recorded = true;
    await this.conversation.record(turn.messages);
  }

  async #transform(params: CallOptions): Promise<CallOptions> {
    const { prompt } = params;
    let lead = 0;
    while (prompt[lead]?.role === 'system') lead++;
    const userAt = prompt.findLastIndex((m) => m.role === 'user');
    // Nothing to recall for (no user message): the call goes through as it is.
    if (userAt < 0) return params;
    const appSystem = prompt.slice(0, lead);
    const before = prompt.slice(lead, userAt);
    const user = prompt[userAt]!;
    const after = prompt.slice(userAt + 1);
    const userMessage = toChatMessages([user])[0]?.content ?? '';
    const messages: ChatMessage[] = [{ role: 'user', content: userMessage }, ...toChatMessages(after)];

    let turn = this.#turn;
    // A later step of the turn (tool results follow the user message), or a retry of a call that produced
    // nothing, uses the turn's prepared memory; anything else starts a new turn.
    const continues =
      turn !== undefined &&
      !turn.recorded &&
      turn.userMessage === userMessage &&
      (after.length > 0 || turn.messages.length === 1);
    if (turn && continues) {
      turn.messages = messages;
    } else {
      await this.flush();
      const prepared = await this.conversation.prepare(userMessage, {
        ...(params.abortSignal ? { signal: params.abortSignal } : {}),
        appMessages: toChatMessages([...appSystem, ...before]),
        appTools: this.#appTools(params),
      });
      turn = { userMessage, prepared, messages, recorded: false };
      this.#turn = turn;
    }
    const next: CallOptions = {
      ...params,
      prompt: [
        ...appSystem,
        ...toPromptMessages(turn.prepared.system),
        ...toPromptMessages(turn.prepared.history),
        ...before,
        user,
        ...after,
      ],
    };
    this.#steps.set(next, { turn, messages });
    return next;
  }

  /** The function tools of the call that are not Kioku's (Kioku's are counted by `prepare` already). */
  #appTools(params: CallOptions): OpenAIToolDefinition[] {
    const kioku = new Set(this.conversation.tools.map((t) => t.function.name));
    return (params.tools ?? [])
      .filter((t) => t.type === 'function' && !kioku.has(t.name))
      .map((t) => ({
        type: 'function',
        function: {
          name: t.name,
          description: t.description ?? '',
          parameters: (t.inputSchema ?? {}) as Record<string, unknown>,
        },
      }));
  }

  async #afterStep(step: Step, assistant: ChatMessage): Promise<void> {
    const { turn } = step;
    if (turn.recorded) return;
    turn.messages = [...step.messages, assistant];
    if (!assistant.toolCalls?.length) await this.flush();
  }
}

/**
 * Kioku's memory for a conversation in the AI SDK:
 *
 * ```ts
 * const memory = kiokuMemory(await kioku.startConversation({ userId }));
 * const model = wrapLanguageModel({ model: openai('gpt-4.1'), middleware: memory.middleware });
 * await generateText({ model, tools: memory.tools, prompt: 'Where do I live?', stopWhen: stepCountIs(5) });
 * ```
 */
export function kiokuMemory(conversation: Conversation): KiokuMemory {
  return new KiokuMemory(conversation);
}
