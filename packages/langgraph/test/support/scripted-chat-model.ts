import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';

/**
 * A LangChain chat model that answers from a script and keeps every request's messages. @langchain/core's
 * own fakes cannot script a tool call followed by an answer (FakeListChatModel answers text only,
 * FakeStreamingChatModel always its first response), so this is the smallest BaseChatModel that can:
 * `bindTools` returns the model itself, as createReactAgent needs.
 */
export class ScriptedChatModel extends BaseChatModel {
  readonly requests: BaseMessage[][] = [];
  readonly #script: AIMessage[];

  constructor(script: AIMessage[]) {
    super({});
    this.#script = [...script];
  }

  _llmType(): string {
    return 'scripted';
  }

  override bindTools(): this {
    return this;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.requests.push(messages);
    const message = this.#script.shift();
    if (!message) throw new Error(`The script has no reply left for request ${this.requests.length}.`);
    return { generations: [{ message, text: typeof message.content === 'string' ? message.content : '' }] };
  }

  /** Every request's text, one string per request (system, human, AI and tool messages). */
  requestTexts(): string[] {
    return this.requests.map((messages) => messages.map((m) => JSON.stringify(m.content)).join('\n'));
  }
}

export function say(text: string): AIMessage {
  return new AIMessage(text);
}

export function callTool(name: string, args: Record<string, unknown>, id = `call_${name}`): AIMessage {
  return new AIMessage({ content: '', tool_calls: [{ id, name, args, type: 'tool_call' }] });
}
