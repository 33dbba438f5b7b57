import { ValidationError } from '../foundation/errors.js';
import type { ChatModel, ChatModelReply, ChatModelRequest } from './chat-model.js';

/**
 * One scripted reply: the assistant's text; an object (the JSON a memory pass asks for, sent as the reply's
 * text); tool calls; or a function of the request (to answer from what Kioku put in the prompt).
 */
export type ScriptedReply =
  | string
  | { json: unknown }
  | { toolCalls: { name: string; arguments?: Record<string, unknown> }[] }
  | ((request: ChatModelRequest) => string | ChatModelReply);

/**
 * A `ChatModel` that answers from a script, one reply per call, in order — for tests and offline demos of
 * a stack: `new ScriptedModel(['Noted.', { toolCalls: [{ name: 'save_memory', arguments: { content } }] }])`.
 * Every request is kept in `requests`, so a test can read the prompt Kioku built. A call past the end of
 * the script fails with VALIDATION, naming how many replies were scripted.
 */
export class ScriptedModel implements ChatModel {
  /** Every request the model received, oldest first. */
  readonly requests: ChatModelRequest[] = [];
  readonly #replies: ScriptedReply[];
  #calls = 0;

  constructor(replies: readonly ScriptedReply[] = []) {
    this.#replies = [...replies];
  }

  /** Add replies to the end of the script. */
  script(...replies: ScriptedReply[]): this {
    this.#replies.push(...replies);
    return this;
  }

  /** Replies scripted and not yet given. */
  get remaining(): number {
    return this.#replies.length;
  }

  async complete(request: ChatModelRequest): Promise<ChatModelReply> {
    this.requests.push(request);
    const reply = this.#replies.shift();
    this.#calls++;
    if (reply === undefined) {
      throw new ValidationError(
        `The scripted model has no reply left for call ${this.#calls} (${this.#calls - 1} were scripted); add replies with script().`,
      );
    }
    if (typeof reply === 'string') return { role: 'assistant', content: reply };
    if (typeof reply === 'function') {
      const answer = reply(request);
      return typeof answer === 'string' ? { role: 'assistant', content: answer } : answer;
    }
    if ('json' in reply) return { role: 'assistant', content: JSON.stringify(reply.json) };
    return {
      role: 'assistant',
      content: '',
      toolCalls: reply.toolCalls.map((call, i) => ({
        id: `call_${this.#calls}_${i + 1}`,
        name: call.name,
        arguments: JSON.stringify(call.arguments ?? {}),
      })),
    };
  }
}
