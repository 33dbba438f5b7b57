import type { ChatMessage, ChatModel, ChatModelRequest } from '@kioku/core';
import type OpenAI from 'openai';
import { createClient, env, type OpenAIClientOptions } from './client.js';
import { OpenAIEndpointError, wrapEndpointError } from './errors.js';
import { fromOpenAIMessage, StreamAssembler, toOpenAIMessages } from './messages.js';

export interface OpenAIChatModelOptions extends OpenAIClientOptions {
  /** Default `OPENAI_MODEL`, else `gpt-4o-mini`. */
  model?: string;
  /** Stream replies (content deltas go to `onToken`). Default true when `onToken` is set. */
  stream?: boolean;
  /** Called with each streamed content delta. */
  onToken?: (text: string) => void;
  temperature?: number;
  /** Most tokens per reply (`max_completion_tokens`). */
  maxOutputTokens?: number;
  /** Extra request fields for servers with their own options (e.g. `{ top_k: 20 }`). */
  extraBody?: Record<string, unknown>;
}

/** A request with an optional per-call token callback (the agent loop passes its `onToken` this way). */
export interface StreamingChatModelRequest extends ChatModelRequest {
  onToken?: (text: string) => void;
}

/** One event of `OpenAIChatModel.stream`: a content delta, then the assembled message last. */
export type ChatStreamEvent = { type: 'token'; text: string } | { type: 'message'; message: ChatMessage };

/**
 * Kioku's `ChatModel` over any OpenAI-compatible Chat Completions endpoint (OpenAI, Azure's v1 API,
 * Ollama, vLLM, LM Studio …) through the official SDK. Retries, backoff and timeouts are the SDK's;
 * every endpoint failure is thrown as `OpenAIEndpointError`.
 */
export class OpenAIChatModel implements ChatModel {
  readonly client: OpenAI;
  readonly model: string;
  readonly #options: OpenAIChatModelOptions;

  constructor(options: OpenAIChatModelOptions = {}) {
    this.client = createClient(options);
    this.model = options.model ?? env('OPENAI_MODEL') ?? 'gpt-4o-mini';
    this.#options = options;
  }

  async complete(request: StreamingChatModelRequest): Promise<ChatMessage> {
    const onToken = request.onToken ?? this.#options.onToken;
    if (!(this.#options.stream ?? onToken !== undefined)) return this.#completeOnce(request);
    let message: ChatMessage | undefined;
    for await (const event of this.stream(request)) {
      if (event.type === 'token') onToken?.(event.text);
      else message = event.message;
    }
    // stream() always ends with the message; this only satisfies the type checker.
    if (!message) throw new OpenAIEndpointError('The stream ended without a reply.', { failure: 'response' });
    return message;
  }

  /** Stream one reply: content deltas as they arrive, then the assembled message (tool calls merged). */
  async *stream(request: ChatModelRequest): AsyncGenerator<ChatStreamEvent> {
    const assembler = new StreamAssembler();
    try {
      const stream = await this.client.chat.completions.create(
        { ...this.#body(request), stream: true },
        request.signal ? { signal: request.signal } : {},
      );
      for await (const chunk of stream) {
        const text = assembler.push(chunk.choices[0]?.delta);
        if (text) yield { type: 'token', text };
      }
    } catch (error) {
      throw wrapEndpointError(error, 'The chat completion stream', request.signal);
    }
    yield { type: 'message', message: assembler.message() };
  }

  async #completeOnce(request: ChatModelRequest): Promise<ChatMessage> {
    let completion: OpenAI.Chat.Completions.ChatCompletion;
    try {
      completion = await this.client.chat.completions.create(
        { ...this.#body(request), stream: false },
        request.signal ? { signal: request.signal } : {},
      );
    } catch (error) {
      throw wrapEndpointError(error, 'The chat completion', request.signal);
    }
    const choice = completion.choices?.[0];
    if (!choice?.message) {
      throw new OpenAIEndpointError('The chat completion has no choices.', { failure: 'response' });
    }
    return fromOpenAIMessage(choice.message);
  }

  #body(request: ChatModelRequest) {
    const { temperature, maxOutputTokens, extraBody } = this.#options;
    return {
      ...extraBody,
      model: this.model,
      messages: toOpenAIMessages(request.messages),
      ...(request.tools.length > 0 ? { tools: request.tools } : {}),
      ...(temperature === undefined ? {} : { temperature }),
      ...(maxOutputTokens === undefined ? {} : { max_completion_tokens: maxOutputTokens }),
    };
  }
}
