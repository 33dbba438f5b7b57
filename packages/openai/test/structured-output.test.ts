import { isKiokuError } from '@kioku/core';
import { generateObject, toJsonSchema, UsageLedger } from '@kioku/core/model';
import { type Reply, startScriptedServer, status, text, toolCalls, usage } from '@kioku/openai-test-server';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { OpenAIChatModel, type OpenAIChatModelOptions, OpenAIEndpointError } from '../src/index.js';

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function serve(script: Reply[], options: OpenAIChatModelOptions = {}) {
  const server = await startScriptedServer(script);
  close = server.close;
  const model = new OpenAIChatModel({
    baseURL: server.baseURL,
    apiKey: 'k',
    model: 'm1',
    maxRetries: 0,
    ...options,
  });
  const bodies = () => server.received.map((r) => r.body);
  return { server, model, bodies };
}

const Facts = z.object({ facts: z.array(z.object({ content: z.string(), category: z.string() })) });
const valid = { facts: [{ content: 'Vegetarian', category: 'user-preferences/food' }] };
const messages = [
  { role: 'system' as const, content: 'Extract facts.' },
  { role: 'user' as const, content: 'I am vegetarian.' },
];
const refusal = (what: string) =>
  status(400, {}, `Invalid parameter: 'response_format' of type '${what}' is not supported.`);

describe('OpenAIChatModel structured output', () => {
  it('asks with a json_schema response format and maps the usage', async () => {
    const { model, bodies } = await serve([text(JSON.stringify(valid), usage(40, 8))]);
    const ledger = new UsageLedger();
    const result = await generateObject(model, {
      schema: Facts,
      schemaName: 'user facts',
      messages,
      usage: ledger,
    });
    expect(result).toEqual({ object: valid, attempts: 1, usage: { inputTokens: 40, outputTokens: 8 } });
    expect(ledger.total).toEqual({ inputTokens: 40, outputTokens: 8 });
    const [body] = bodies();
    expect(body).toEqual({
      model: 'm1',
      stream: false,
      messages,
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'user_facts', schema: toJsonSchema(Facts), strict: false },
      },
    });
    expect(model.structuredOutputMode).toBe('json_schema');
  });

  it('repairs through the same response format', async () => {
    const { model, bodies } = await serve([
      text('{"facts":[{"content":"Vegetarian"}]}'),
      text(JSON.stringify(valid)),
    ]);
    const result = await generateObject(model, { schema: Facts, schemaName: 'facts', messages });
    expect(result.attempts).toBe(2);
    // The server sent no usage: counted by core's tokenizer.
    expect(result.usage.estimated).toBe(true);
    const second = bodies()[1]!;
    expect(second.response_format).toMatchObject({ type: 'json_schema' });
    expect((second.messages as { role: string; content: string }[]).at(-1)!.content).toContain(
      '- facts[0].category: ',
    );
  });

  it('falls back to json_object after a 400 refusing json_schema, and stays there', async () => {
    const { model, bodies } = await serve([
      refusal('json_schema'),
      text(JSON.stringify(valid), usage(30, 6)),
      text(JSON.stringify({ facts: [] })),
    ]);
    const first = await generateObject(model, { schema: Facts, schemaName: 'facts', messages });
    expect(first.object).toEqual(valid);
    expect(first.usage).toEqual({ inputTokens: 30, outputTokens: 6 });
    expect(model.structuredOutputMode).toBe('json_object');
    const second = await generateObject(model, { schema: Facts, schemaName: 'facts', messages });
    expect(second.object).toEqual({ facts: [] });
    const sent = bodies();
    expect(sent).toHaveLength(3);
    expect(sent[0]!.response_format).toMatchObject({ type: 'json_schema' });
    for (const body of sent.slice(1)) {
      expect(body.response_format).toEqual({ type: 'json_object' });
      const [system, user] = body.messages as { role: string; content: string }[];
      expect(system!.role).toBe('system');
      expect(system!.content).toMatch(/^Extract facts\.\n\n.*JSON/s);
      expect(system!.content).toContain(JSON.stringify(toJsonSchema(Facts)));
      expect(user).toEqual(messages[1]);
    }
  });

  it('falls back to a forced tool call when JSON mode is refused too', async () => {
    const { model, bodies } = await serve([
      refusal('json_schema'),
      refusal('json_object'),
      toolCalls({ id: 'call_1', name: 'facts', arguments: valid }),
    ]);
    const result = await generateObject(model, { schema: Facts, schemaName: 'facts', messages });
    expect(result.object).toEqual(valid);
    expect(model.structuredOutputMode).toBe('tool');
    const body = bodies()[2]!;
    expect(body).not.toHaveProperty('response_format');
    expect(body.messages).toEqual(messages);
    expect(body.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'facts',
          description: 'Answer with the facts object.',
          parameters: toJsonSchema(Facts),
        },
      },
    ]);
    expect(body.tool_choice).toEqual({ type: 'function', function: { name: 'facts' } });
  });

  it('uses a pinned mode straight away and never falls back from it', async () => {
    const tool = await serve([toolCalls({ id: 'c', name: 'facts', arguments: valid })], {
      structuredOutput: 'tool',
    });
    expect(tool.model.structuredOutputMode).toBe('tool');
    await generateObject(tool.model, { schema: Facts, schemaName: 'facts', messages });
    expect(tool.bodies()).toHaveLength(1);
    expect(tool.bodies()[0]!.tool_choice).toEqual({ type: 'function', function: { name: 'facts' } });
    await close?.();

    const pinned = await serve([refusal('json_schema'), text(JSON.stringify(valid))], {
      structuredOutput: 'json_schema',
    });
    const error = await generateObject(pinned.model, { schema: Facts, schemaName: 'facts', messages }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(OpenAIEndpointError);
    expect((error as OpenAIEndpointError).status).toBe(400);
    expect(pinned.bodies()).toHaveLength(1);
  });

  it('does not fall back on a 400 that is not about the response format', async () => {
    const { model, bodies } = await serve([
      status(400, {}, "This model's maximum context length is 8192 tokens."),
      text(JSON.stringify(valid)),
    ]);
    const error = await generateObject(model, { schema: Facts, schemaName: 'facts', messages }).catch(
      (e: unknown) => e,
    );
    expect(isKiokuError(error, 'STORAGE')).toBe(true);
    expect(bodies()).toHaveLength(1);
    expect(model.structuredOutputMode).toBeUndefined();
  });

  it('reports usage on plain completions when the server sends it', async () => {
    const { model } = await serve([text('Hi.', usage(11, 2)), text('Again.')]);
    expect(await model.complete({ messages, tools: [] })).toEqual({
      role: 'assistant',
      content: 'Hi.',
      usage: { inputTokens: 11, outputTokens: 2 },
    });
    expect(await model.complete({ messages, tools: [] })).toEqual({ role: 'assistant', content: 'Again.' });
  });
});
