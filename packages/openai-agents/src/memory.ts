import type { ChatMessage, Conversation, Kioku, PreparedTurn, TurnLedger } from '@kioku/core';
import type { OpenAIToolDefinition } from '@kioku/core/model';
import type { CallModelInputFilter, FunctionTool, ModelInputData, Tool } from '@openai/agents';
import { isUserMessage, toChatMessages, userText } from './items.js';
import { KiokuSession } from './session.js';
import { kiokuTools, offloadTools } from './tools.js';

interface Turn {
  /** The user message's position in the input and its text: the same for every call of one turn. */
  key: string;
  prepared: PreparedTurn;
  recorded: boolean;
}

/**
 * Kioku's memory for one conversation in the OpenAI Agents SDK: `session` and `inputFilter` for `run()`,
 * `tools` for the agent, `wrapTools` for the agent's own tools. One run at a time per conversation.
 */
export class KiokuAgentMemory {
  readonly conversation: Conversation;
  /** The run's `session`: items kept in Kioku's session store, finished turns recorded in the transcript. */
  readonly session: KiokuSession;
  /** Kioku's memory tools (see `kiokuTools`); give them to the agent. */
  readonly tools: FunctionTool[];
  /**
   * The run's `callModelInputFilter`: before each model call it appends Kioku's system prompt and memory
   * blocks to the agent's instructions, prepared once per user message within one token budget that also
   * pays for the instructions, the input items and the agent's other tools. The input items are left as
   * they are (so nothing Kioku injects is stored in the session); replayed turns are the session's job,
   * so Kioku's conversation replay (`withConversationHistory`) is not sent.
   */
  readonly inputFilter: CallModelInputFilter;
  #turn: Turn | undefined;

  constructor(kioku: Pick<Kioku, 'stores'>, conversation: Conversation) {
    this.conversation = conversation;
    this.tools = kiokuTools(conversation);
    this.session = new KiokuSession({
      conversation,
      sessions: kioku.stores.sessions,
      onTurnRecorded: () => {
        if (this.#turn) this.#turn.recorded = true;
      },
    });
    this.inputFilter = ({ modelData, agent }) => this.#inject(modelData, agent.tools);
  }

  /** The ledger of the turn prepared last: the budget, what each feature injected and what it dropped. */
  get ledger(): TurnLedger | undefined {
    return this.#turn?.prepared.ledger;
  }

  /** The agent's own tools, their large outputs offloaded to detail memory (see `offloadTools`). */
  wrapTools<T extends Tool>(tools: readonly T[]): T[] {
    return offloadTools(this.conversation, tools);
  }

  async #inject(modelData: ModelInputData, agentTools: readonly Tool[]): Promise<ModelInputData> {
    const { input, instructions } = modelData;
    const at = input.findLastIndex(isUserMessage);
    let turn = this.#turn;
    if (at < 0) {
      // A later call of a turn whose history the server keeps (`previousResponseId`, `conversationId`)
      // sends only the new items: it gets the turn's memory. Otherwise there is nothing to recall for.
      return turn && !turn.recorded ? withBlocks(modelData, turn.prepared) : modelData;
    }
    const userMessage = userText(input[at]!);
    const key = `${at}\u0000${userMessage}`;
    // Later calls of the turn (after tool calls) and retries keep the memory prepared for its message.
    if (!turn || turn.recorded || turn.key !== key) {
      const appMessages: ChatMessage[] = [
        ...(instructions ? [{ role: 'system' as const, content: instructions }] : []),
        ...toChatMessages(input.slice(0, at)),
      ];
      const prepared = await this.conversation.prepare(userMessage, {
        appMessages,
        appTools: this.#appTools(agentTools),
      });
      turn = { key, prepared, recorded: false };
      this.#turn = turn;
    }
    return withBlocks(modelData, turn.prepared);
  }

  /** The agent's function tools that are not Kioku's (Kioku's are counted by `prepare` already). */
  #appTools(tools: readonly Tool[]): OpenAIToolDefinition[] {
    const kioku = new Set(this.conversation.tools.map((t) => t.function.name));
    return tools
      .filter((t): t is FunctionTool => t.type === 'function' && !kioku.has(t.name))
      .map((t) => ({
        type: 'function',
        function: {
          name: t.name,
          description: t.description,
          parameters: t.parameters as Record<string, unknown>,
        },
      }));
  }
}

/** The model input with Kioku's system prompt and memory blocks after the agent's instructions. */
function withBlocks(modelData: ModelInputData, prepared: PreparedTurn): ModelInputData {
  const blocks = prepared.system.map((m) => m.content);
  return { ...modelData, instructions: [modelData.instructions, ...blocks].filter(Boolean).join('\n\n') };
}

/**
 * Kioku's memory for a conversation in the Agents SDK:
 *
 * ```ts
 * const memory = kiokuMemory(kioku, await kioku.startConversation({ userId }));
 * const agent = new Agent({ name: 'Assistant', instructions: '…', tools: memory.tools });
 * await run(agent, 'Where do I live?', { session: memory.session, callModelInputFilter: memory.inputFilter });
 * ```
 */
export function kiokuMemory(kioku: Pick<Kioku, 'stores'>, conversation: Conversation): KiokuAgentMemory {
  return new KiokuAgentMemory(kioku, conversation);
}
