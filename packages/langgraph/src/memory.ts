import { randomUUID } from 'node:crypto';
import {
  type Conversation,
  type Kioku,
  type PreparedTurn,
  type TurnLedger,
  ValidationError,
} from '@kioku/core';
import { toOpenAITool } from '@kioku/core/model';
import { type BaseMessage, SystemMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import { DynamicStructuredTool } from '@langchain/core/tools';
import { isFinalAnswer, isHuman, messageText, toChatMessages } from './messages.js';
import { type UserOption, userIdFromConfig, userScope } from './user.js';

export interface KiokuGraphMemoryOptions {
  kioku: Kioku;
  /**
   * Whose memory a run reads and writes: a user id, or a function of the run's `config.configurable`.
   * Default: `configurable.user_id`. Never taken from what a model wrote.
   */
  userId?: UserOption;
  /** Partition the user's memory per agent (Kioku's `agentId`). */
  agentId?: string;
}

/** The state a LangGraph agent keeps its messages in (`MessagesAnnotation`, `createReactAgent`'s). */
export interface MessagesState {
  messages: BaseMessage[];
}

interface Turn {
  /** The human message's position and text: the same for every model call of one turn. */
  key: string;
  prepared: PreparedTurn;
  recorded: boolean;
}

interface Thread {
  conversation: Conversation;
  turn?: Turn;
}

/** The session metadata key that names the LangGraph thread a Kioku session belongs to. */
export const THREAD_METADATA_KEY = 'langgraphThreadId';

/**
 * Kioku's memory for a LangGraph agent, the LangGraph way:
 *
 * - `prompt` — `createReactAgent({ prompt })`, or call it in your model node: Kioku's system prompt and
 *   memory blocks for the state's last human message (the user's facts, plans, working memory … within one
 *   token budget), put before the state's messages;
 * - `record` — `createReactAgent({ postModelHook })`, or a node after your model node: once the model has
 *   answered (no tool calls), the turn is recorded in Kioku's transcript, where extraction and the rest of
 *   Kioku's memory read it;
 * - `tools` — Kioku's memory tools as LangChain tools, run in the user's conversation.
 *
 * The user comes from the run's config (`configurable.user_id` by default), the thread from
 * `configurable.thread_id`: each LangGraph thread is one Kioku session of that user.
 */
export class KiokuGraphMemory {
  readonly kioku: Kioku;
  readonly #user: UserOption;
  readonly #agentId: string | undefined;
  readonly #threads = new Map<string, Promise<Thread>>();

  constructor(options: KiokuGraphMemoryOptions) {
    this.kioku = options.kioku;
    this.#user = options.userId ?? userIdFromConfig;
    this.#agentId = options.agentId;
  }

  /** The prompt: Kioku's system prompt and memory blocks, then the state's messages. */
  readonly prompt = async (state: MessagesState, config: RunnableConfig): Promise<BaseMessage[]> => {
    const thread = await this.#thread(config);
    const at = state.messages.findLastIndex(isHuman);
    if (at < 0) return state.messages;
    const userMessage = messageText(state.messages[at]!);
    const key = `${at}\u0000${userMessage}`;
    // Later model calls of the turn (after tool calls) keep the memory prepared for its message.
    if (!thread.turn || thread.turn.recorded || thread.turn.key !== key) {
      const appMessages = toChatMessages(state.messages.slice(0, at));
      const prepared = await thread.conversation.prepare(userMessage, { appMessages });
      thread.turn = { key, prepared, recorded: false };
    }
    const blocks = thread.turn.prepared.system.map((m) => new SystemMessage(m.content));
    return [...blocks, ...state.messages];
  };

  /** After the model: records the turn (human message to final answer) once the model has answered. */
  readonly record = async (state: MessagesState, config: RunnableConfig): Promise<Partial<MessagesState>> => {
    if (!isFinalAnswer(state.messages.at(-1))) return {};
    const thread = await this.#thread(config);
    const at = state.messages.findLastIndex(isHuman);
    if (at < 0) return {};
    const key = `${at}\u0000${messageText(state.messages[at]!)}`;
    if (thread.turn?.key === key && thread.turn.recorded) return {};
    await thread.conversation.record(toChatMessages(state.messages.slice(at)));
    if (thread.turn?.key === key) thread.turn.recorded = true;
    return {};
  };

  /**
   * Kioku's memory tools (the features' toolkits: `create_memory`, `search_memory`, working memory …) as
   * LangChain tools. Each call runs through `conversation.executeToolCalls` in the conversation of the run's
   * user and thread: validated by Kioku, answered to the model as coded JSON errors when wrong.
   */
  get tools(): DynamicStructuredTool[] {
    const definitions = this.kioku.features.flatMap((f) => f.toolkit?.tools ?? []).map(toOpenAITool);
    const unique = [...new Map(definitions.map((d) => [d.function.name, d])).values()];
    return unique.map(({ function: { name, description, parameters } }) => {
      return new DynamicStructuredTool({
        name,
        description,
        schema: parameters as Record<string, unknown>,
        func: async (input: unknown, _runManager, config) => {
          const { conversation } = await this.#thread(config ?? {});
          const call = {
            id:
              (config as { toolCall?: { id?: string } } | undefined)?.toolCall?.id ?? `call_${randomUUID()}`,
            name,
            arguments: JSON.stringify(input ?? {}),
          };
          const [result] = await conversation.executeToolCalls([call]);
          return result?.content ?? '';
        },
      });
    });
  }

  /** The ledger of the turn prepared last in the run's thread. */
  async ledger(config: RunnableConfig): Promise<TurnLedger | undefined> {
    return (await this.#thread(config)).turn?.prepared.ledger;
  }

  /** The Kioku conversation of the run's user and thread (created on the thread's first use). */
  async conversation(config: RunnableConfig): Promise<Conversation> {
    return (await this.#thread(config)).conversation;
  }

  #thread(config: RunnableConfig): Promise<Thread> {
    const configurable = (config.configurable ?? {}) as Record<string, unknown>;
    const { userId, agentId } = userScope(this.#user, this.#agentId, configurable);
    const threadId = configurable.thread_id;
    if (typeof threadId !== 'string' || threadId === '') {
      throw new ValidationError(
        "Kioku memory needs the run's thread: pass { configurable: { thread_id } } to invoke() or stream().",
      );
    }
    const key = JSON.stringify([userId, agentId ?? null, threadId]);
    let thread = this.#threads.get(key);
    if (!thread) {
      thread = this.#open({ userId, ...(agentId === undefined ? {} : { agentId }) }, threadId);
      thread.catch(() => this.#threads.delete(key));
      this.#threads.set(key, thread);
    }
    return thread;
  }

  async #open(scope: { userId: string; agentId?: string }, threadId: string): Promise<Thread> {
    const sessions = await this.kioku.stores.sessions.list(scope);
    const existing = sessions.find((s) => s.metadata?.[THREAD_METADATA_KEY] === threadId);
    const conversation = existing
      ? await this.kioku.resumeConversation(scope, existing.id)
      : await this.kioku.startConversation(scope, { metadata: { [THREAD_METADATA_KEY]: threadId } });
    return { conversation };
  }
}
