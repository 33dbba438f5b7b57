import type { ChatMessage, ChatModel, ChatModelReply, ChatModelRequest, ModelUsage } from '@kioku/core';
import { type JsonCompletion, type JsonCompletionRequest, withJsonInstruction } from '@kioku/core/model';
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
  /**
   * How `completeJson` (core's `generateObject`) asks for JSON: a JSON-schema response format, JSON mode
   * with the schema in the prompt, or a forced tool call whose arguments are the object. `auto` (default)
   * tries them in that order, moving on when the server refuses one (HTTP 400/422 naming it), and keeps the
   * first that works for the later calls of this instance.
   */
  structuredOutput?: StructuredOutputMode | 'auto';
}

export type StructuredOutputMode = 'json_schema' | 'json_object' | 'tool';

const STRUCTURED_MODES: readonly StructuredOutputMode[] = ['json_schema', 'json_object', 'tool'];

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
  /** The structured-output mode that worked (auto), so later calls go straight to it. */
  #structuredMode: StructuredOutputMode | undefined;

  constructor(options: OpenAIChatModelOptions = {}) {
    this.client = createClient(options);
    this.model = options.model ?? env('OPENAI_MODEL') ?? 'gpt-4o-mini';
    this.#options = options;
    if (options.structuredOutput && options.structuredOutput !== 'auto')
      this.#structuredMode = options.structuredOutput;
  }

  /** The model's name, for telemetry (`gen_ai.request.model`): the same as `model`. */
  get modelId(): string {
    return this.model;
  }

  /** Who serves it, for telemetry (`gen_ai.provider.name`): OpenAI's API or an OpenAI-compatible one. */
  get provider(): string {
    return 'openai';
  }

  /** The structured-output mode in use: the pinned one, or the one `auto` found to work (until then none). */
  get structuredOutputMode(): StructuredOutputMode | undefined {
    return this.#structuredMode;
  }

  async complete(request: ChatModelRequest): Promise<ChatModelReply> {
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

  /**
   * The JSON text of an object of `jsonSchema` (core's `generateObject` validates it), through the
   * `structuredOutput` mode: `response_format: json_schema`, else `json_object` with the schema in the
   * system message, else a forced call of a tool whose parameters are the schema.
   */
  async completeJson(request: JsonCompletionRequest): Promise<JsonCompletion> {
    const pinned = this.#options.structuredOutput !== undefined && this.#options.structuredOutput !== 'auto';
    const modes = this.#structuredMode ? [this.#structuredMode] : STRUCTURED_MODES;
    for (const [i, mode] of modes.entries()) {
      try {
        const result = await this.#completeJsonAs(mode, request);
        this.#structuredMode = mode;
        return result;
      } catch (error) {
        if (pinned || i === modes.length - 1 || !refusesMode(error)) throw error;
      }
    }
    // Unreachable: the last mode either returns or throws.
    throw new OpenAIEndpointError('No structured-output mode was tried.', { failure: 'response' });
  }

  async #completeJsonAs(mode: StructuredOutputMode, request: JsonCompletionRequest): Promise<JsonCompletion> {
    const name = schemaNameForApi(request.schemaName);
    const { jsonSchema: schema } = request;
    let extra: Record<string, unknown>;
    let messages = request.messages;
    switch (mode) {
      case 'json_schema':
        extra = { response_format: { type: 'json_schema', json_schema: { name, schema, strict: false } } };
        break;
      case 'json_object':
        // JSON mode carries no schema (and OpenAI wants the word JSON in the prompt): the prompt has both.
        messages = withJsonInstruction(messages, request.schemaName, schema);
        extra = { response_format: { type: 'json_object' } };
        break;
      case 'tool':
        extra = {
          tools: [
            {
              type: 'function',
              function: {
                name,
                description: `Answer with the ${request.schemaName} object.`,
                parameters: schema,
              },
            },
          ],
          tool_choice: { type: 'function', function: { name } },
        };
        break;
    }
    const { message, usage } = await this.#create(
      { ...this.#body({ messages, tools: [] }), ...extra },
      request.signal,
      `The structured completion (${mode})`,
    );
    const call = message.tool_calls?.find((c) => c.type === 'function');
    const text =
      mode === 'tool' && call?.type === 'function' ? call.function.arguments : (message.content ?? '');
    return { text, ...(usage ? { usage } : {}) };
  }

  async #completeOnce(request: ChatModelRequest): Promise<ChatModelReply> {
    const { message, usage } = await this.#create(this.#body(request), request.signal, 'The chat completion');
    return { ...fromOpenAIMessage(message), ...(usage ? { usage } : {}) };
  }

  async #create(
    body: Record<string, unknown>,
    signal: AbortSignal | undefined,
    what: string,
  ): Promise<{ message: OpenAI.Chat.Completions.ChatCompletionMessage; usage?: ModelUsage }> {
    let completion: OpenAI.Chat.Completions.ChatCompletion;
    try {
      completion = await this.client.chat.completions.create(
        { ...body, stream: false } as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming,
        signal ? { signal } : {},
      );
    } catch (error) {
      throw wrapEndpointError(error, what, signal);
    }
    const choice = completion.choices?.[0];
    if (!choice?.message) {
      throw new OpenAIEndpointError(`${what} has no choices.`, { failure: 'response' });
    }
    const usage = fromOpenAIUsage(completion.usage);
    return { message: choice.message, ...(usage ? { usage } : {}) };
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

/** OpenAI's `usage` → core's `ModelUsage` (none when the server sent none). */
export function fromOpenAIUsage(
  usage: OpenAI.Completions.CompletionUsage | undefined,
): ModelUsage | undefined {
  if (!usage || typeof usage.prompt_tokens !== 'number' || typeof usage.completion_tokens !== 'number')
    return;
  return { inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens };
}

/** A name OpenAI accepts for a response format or a function: `[a-zA-Z0-9_-]{1,64}`. */
function schemaNameForApi(name: string): string {
  return name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64) || 'object';
}

/** A 400/422 refusing the structured-output request itself (not the prompt), so the next mode may work. */
function refusesMode(error: unknown): boolean {
  if (!(error instanceof OpenAIEndpointError) || (error.status !== 400 && error.status !== 422)) return false;
  // The server's own message (ours names the mode tried, which would always match).
  const said = error.cause instanceof Error ? error.cause.message : '';
  return /response_?format|json_?schema|json_?object|structured|tool_?choice|\btools?\b|function|grammar|not supported|unsupported|unrecognized|unknown (field|param)|extra (fields|inputs)/i.test(
    said,
  );
}
