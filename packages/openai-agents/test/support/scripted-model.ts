import {
  type AgentOutputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
  type StreamEvent,
  Usage,
} from '@openai/agents';

/** One model call's output, or a function of the request that returns it. */
export type Step = AgentOutputItem[] | ((request: ModelRequest) => AgentOutputItem[]);

/** An assistant message item, as `@openai/agents/testing`'s `assistantMessage` makes it. */
export function assistantMessage(text: string): AgentOutputItem {
  return {
    type: 'message',
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text }],
  };
}

/** A function call item, as `@openai/agents/testing`'s `functionCall` makes it. */
export function functionCall(name: string, args: unknown, callId: string): AgentOutputItem {
  return {
    type: 'function_call',
    name,
    callId,
    id: callId,
    status: 'completed',
    arguments: JSON.stringify(args),
  };
}

interface ScriptedModelLike extends Model {
  readonly calls: readonly { request: ModelRequest }[];
}

interface TestingModule {
  ScriptedModel: new (inputs: unknown[]) => ScriptedModelLike;
  modelResponder: (respond: (call: { request: ModelRequest }) => AgentOutputItem[]) => unknown;
}

/**
 * Agents SDK 0.14 ships no model test double: a stand-in that does what the SDK's `ScriptedModel` does
 * for output-only steps (one step per call, the same output streamed as text deltas then `response_done`).
 */
class StandInScriptedModel implements ScriptedModelLike {
  readonly calls: { request: ModelRequest }[] = [];
  readonly #steps: Step[];

  constructor(steps: Step[]) {
    this.#steps = [...steps];
  }

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const index = this.calls.length;
    this.calls.push({ request });
    const step = this.#steps.shift();
    if (!step) throw new Error(`unexpected model call ${index}`);
    const output = typeof step === 'function' ? step(request) : step;
    return { usage: new Usage(), output, responseId: `resp_${index}` };
  }

  async *getStreamedResponse(request: ModelRequest): AsyncIterable<StreamEvent> {
    const response = await this.getResponse(request);
    yield { type: 'response_started' } as StreamEvent;
    for (const item of response.output) {
      if (item.type !== 'message' || item.role !== 'assistant') continue;
      for (const part of item.content) {
        if (part.type === 'output_text') yield { type: 'output_text_delta', delta: part.text };
      }
    }
    yield {
      type: 'response_done',
      response: {
        id: response.responseId ?? 'resp',
        usage: { requests: 1, inputTokens: 0, outputTokens: 0, totalTokens: 0 },
        output: response.output as never,
      },
    };
  }
}

/**
 * The Agents SDK's `ScriptedModel` (`@openai/agents/testing`, in the SDK from 0.15) answering from the
 * script, or on 0.14 the stand-in above. `requests()` are the model requests it got, in order.
 */
export async function scriptedModel(
  steps: Step[],
): Promise<{ model: Model; requests: () => ModelRequest[] }> {
  const specifier = '@openai/agents/testing';
  const testing = (await import(specifier).catch(() => undefined)) as TestingModule | undefined;
  const model = testing
    ? new testing.ScriptedModel(
        steps.map((step) =>
          typeof step === 'function' ? testing.modelResponder((call) => step(call.request)) : step,
        ),
      )
    : new StandInScriptedModel(steps);
  return { model, requests: () => model.calls.map((c) => c.request) };
}
