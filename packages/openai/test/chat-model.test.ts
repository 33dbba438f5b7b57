import { createInMemoryStores, defineTool, KiokuBuilder } from '@kioku/core';
import { toOpenAITool } from '@kioku/core/model';
import {
  byAttempt,
  hang,
  type Reply,
  sse,
  startScriptedServer,
  status,
  streamText,
  text,
  toolCalls,
} from '@kioku/openai-test-server';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isOpenAIEndpointError, OpenAIChatModel, OpenAIEndpointError } from '../src/index.js';

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function serve(script: Reply[] | Reply) {
  const server = await startScriptedServer(script);
  close = server.close;
  return server;
}

const echo = defineTool({
  name: 'echo',
  description: 'Echo the text back',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => `echo: ${text}`,
});

function stack() {
  const stores = createInMemoryStores();
  const { sessions } = stores;
  const kioku = new KiokuBuilder({ stores, systemPrompt: 'You are a test agent.' })
    .withFacts()
    .use({ name: 'echo-tools', toolkit: { name: 'echo', tools: [echo] } })
    .withConversationHistory()
    .build();
  return { sessions, kioku };
}

describe('OpenAIChatModel', () => {
  it('maps messages and tools to the request and tool calls back', async () => {
    const server = await serve([toolCalls({ id: 'call_1', name: 'echo', arguments: { text: 'hi' } })]);
    const model = new OpenAIChatModel({ baseURL: server.baseURL, apiKey: 'k', model: 'm1' });
    const reply = await model.complete({
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'q' },
        {
          role: 'assistant',
          content: '',
          toolCalls: [{ id: 'c0', name: 'echo', arguments: '{"text":"a"}' }],
        },
        { role: 'tool', content: 'echo: a', toolCallId: 'c0', name: 'echo' },
      ],
      tools: [toOpenAITool(echo)],
    });
    expect(reply).toEqual({
      role: 'assistant',
      content: '',
      toolCalls: [{ id: 'call_1', name: 'echo', arguments: '{"text":"hi"}' }],
    });
    const body = server.received[0]!.body;
    expect(server.received[0]!.path).toBe('/v1/chat/completions');
    expect(body.model).toBe('m1');
    expect(body.messages).toEqual([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'q' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c0', type: 'function', function: { name: 'echo', arguments: '{"text":"a"}' } }],
      },
      { role: 'tool', tool_call_id: 'c0', content: 'echo: a' },
    ]);
    expect((body.tools as { function: { name: string } }[])[0]!.function.name).toBe('echo');
  });

  it('streams content deltas to onToken and assembles streamed tool-call deltas', async () => {
    const server = await serve([
      sse([
        { role: 'assistant', content: '' },
        {
          tool_calls: [
            { index: 0, id: 'call_a', type: 'function', function: { name: 'echo', arguments: '' } },
          ],
        },
        { tool_calls: [{ index: 0, function: { arguments: '{"text":' } }] },
        { tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'ec' } }] },
        { tool_calls: [{ index: 1, function: { name: 'ho', arguments: '{"text":"b"}' } }] },
        { tool_calls: [{ index: 0, function: { arguments: '"a"}' } }] },
      ]),
      streamText('Hel', 'lo ', 'world'),
    ]);
    const tokens: string[] = [];
    const model = new OpenAIChatModel({ baseURL: server.baseURL, onToken: (t) => tokens.push(t) });
    const first = await model.complete({ messages: [{ role: 'user', content: 'q' }], tools: [] });
    expect(first.toolCalls).toEqual([
      { id: 'call_a', name: 'echo', arguments: '{"text":"a"}' },
      { id: 'call_b', name: 'echo', arguments: '{"text":"b"}' },
    ]);
    const second = await model.complete({ messages: [{ role: 'user', content: 'q' }], tools: [] });
    expect(second).toEqual({ role: 'assistant', content: 'Hello world' });
    expect(tokens).toEqual(['Hel', 'lo ', 'world']);
    expect(server.received[1]!.body.stream).toBe(true);
  });

  it('offers the stream as an async iterator', async () => {
    const server = await serve([streamText('a', 'b')]);
    const model = new OpenAIChatModel({ baseURL: server.baseURL });
    const events = [];
    for await (const event of model.stream({ messages: [{ role: 'user', content: 'q' }], tools: [] }))
      events.push(event);
    expect(events).toEqual([
      { type: 'token', text: 'a' },
      { type: 'token', text: 'b' },
      { type: 'message', message: { role: 'assistant', content: 'ab' } },
    ]);
  });

  it('retries a 429 (with backoff) and then succeeds', async () => {
    const server = await serve([status(429, { 'retry-after-ms': '20' }), status(503), text('ok')]);
    const model = new OpenAIChatModel({ baseURL: server.baseURL, maxRetries: 2 });
    const started = Date.now();
    const reply = await model.complete({ messages: [{ role: 'user', content: 'q' }], tools: [] });
    expect(reply.content).toBe('ok');
    expect(server.received).toHaveLength(3);
    // The 503 had no retry-after: the SDK's exponential backoff starts at ~0.4–0.5 s.
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
  });

  it('throws a typed error with the status once retries are spent', async () => {
    const server = await serve([status(500), status(500)]);
    const model = new OpenAIChatModel({ baseURL: server.baseURL, maxRetries: 1 });
    const error = await model
      .complete({ messages: [{ role: 'user', content: 'q' }], tools: [] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAIEndpointError);
    expect(isOpenAIEndpointError(error) && error.code).toBe('STORAGE');
    expect((error as OpenAIEndpointError).status).toBe(500);
    expect((error as OpenAIEndpointError).failure).toBe('http');
    expect(server.received).toHaveLength(2);
  });

  it('does not retry a 400', async () => {
    const server = await serve([status(400), text('never')]);
    const model = new OpenAIChatModel({ baseURL: server.baseURL, maxRetries: 3 });
    const error = await model
      .complete({ messages: [{ role: 'user', content: 'q' }], tools: [] })
      .catch((e) => e);
    expect((error as OpenAIEndpointError).status).toBe(400);
    expect(server.received).toHaveLength(1);
  });

  it('times out a hanging request, retries it, and succeeds', async () => {
    // The hang answers attempt 0 and the text the retry, whichever reaches the server first: on a busy
    // machine the limit can run out before attempt 0 arrives, and then only the retry is received. The
    // limit also bounds the retry's answer over loopback (a few ms), so it is far above a busy machine's.
    const server = await serve(byAttempt(hang, text('late but fine')));
    const model = new OpenAIChatModel({ baseURL: server.baseURL, timeoutMs: 2_000, maxRetries: 1 });
    const reply = await model.complete({ messages: [{ role: 'user', content: 'q' }], tools: [] });
    expect(reply.content).toBe('late but fine');
    expect(server.received.at(-1)!.attempt).toBe(1);
  });

  it('reports a timeout as a typed error when retries are spent', async () => {
    const server = await serve([hang]);
    const model = new OpenAIChatModel({ baseURL: server.baseURL, timeoutMs: 150, maxRetries: 0 });
    const error = await model
      .complete({ messages: [{ role: 'user', content: 'q' }], tools: [] })
      .catch((e) => e);
    expect((error as OpenAIEndpointError).failure).toBe('timeout');
  });

  it('cancels through an AbortSignal', async () => {
    // Cancelled once the server holds the request (an event, not a delay that may pass before it arrives).
    const controller = new AbortController();
    const server = await serve([() => controller.abort()]);
    const model = new OpenAIChatModel({ baseURL: server.baseURL, maxRetries: 3 });
    const error = await model
      .complete({ messages: [{ role: 'user', content: 'q' }], tools: [], signal: controller.signal })
      .catch((e) => e);
    expect(error).toBeInstanceOf(OpenAIEndpointError);
    expect((error as OpenAIEndpointError).failure).toBe('aborted');
    expect(server.received).toHaveLength(1);
  });

  it('needs no API key for a local server (OPENAI_BASE_URL only)', () => {
    const saved = { key: process.env.OPENAI_API_KEY, url: process.env.OPENAI_BASE_URL };
    try {
      delete process.env.OPENAI_API_KEY;
      process.env.OPENAI_BASE_URL = 'http://127.0.0.1:1/v1';
      const model = new OpenAIChatModel({ model: 'llama3' });
      expect(model.client.baseURL).toBe('http://127.0.0.1:1/v1');
      expect(model.model).toBe('llama3');
    } finally {
      if (saved.key === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved.key;
      if (saved.url === undefined) delete process.env.OPENAI_BASE_URL;
      else process.env.OPENAI_BASE_URL = saved.url;
    }
  });
});

describe('conversation.run with OpenAIChatModel', () => {
  it('runs tool calls through the pipeline, streams the answer and records the turn', async () => {
    const server = await serve([
      sse([
        {
          tool_calls: [
            { index: 0, id: 'call_1', type: 'function', function: { name: 'echo', arguments: '' } },
          ],
        },
        { tool_calls: [{ index: 0, function: { arguments: '{"text":"ping"}' } }] },
      ]),
      streamText('The tool said ', 'echo: ping'),
    ]);
    const { sessions, kioku } = stack();
    const conversation = await kioku.startConversation({ userId: 'alice' });
    const tokens: string[] = [];
    const result = await conversation.run(
      'ping the tool',
      new OpenAIChatModel({ baseURL: server.baseURL, stream: true }),
      {
        onToken: (t) => tokens.push(t),
      },
    );
    expect(result.answer).toBe('The tool said echo: ping');
    expect(tokens.join('')).toBe(result.answer);
    expect(result.steps).toBe(2);
    expect(result.ledger.entries.map((e) => e.middleware)).toContain('facts');
    expect(result.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    const secondRequest = server.received[1]!.body.messages as { role: string; content: string }[];
    expect(secondRequest.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_1', content: 'echo: ping' });
    const transcript = await sessions.transcriptReadLast(conversation.scope, conversation.sessionId, 10);
    expect(transcript.map((e) => e.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('keeps the transcript written so far when the endpoint fails on the second call', async () => {
    const server = await serve([
      toolCalls({ id: 'call_1', name: 'echo', arguments: { text: 'x' } }),
      status(500),
    ]);
    const { sessions, kioku } = stack();
    const conversation = await kioku.startConversation({ userId: 'bob' });
    const error = await conversation
      .run('use the tool', new OpenAIChatModel({ baseURL: server.baseURL, maxRetries: 0 }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAIEndpointError);
    expect((error as OpenAIEndpointError).status).toBe(500);
    const transcript = await sessions.transcriptReadLast(conversation.scope, conversation.sessionId, 10);
    expect(transcript.map((e) => [e.role, e.content])).toEqual([
      ['user', 'use the tool'],
      ['assistant', ''],
      ['tool', 'echo: x'],
    ]);
    expect(transcript[1]!.toolCalls?.[0]?.name).toBe('echo');
  });

  it('stops at maxSteps', async () => {
    const call = toolCalls({ id: 'call_1', name: 'echo', arguments: { text: 'again' } });
    const server = await serve([call, call]);
    const { kioku } = stack();
    const conversation = await kioku.startConversation({ userId: 'carol' });
    const result = await conversation.run('loop', new OpenAIChatModel({ baseURL: server.baseURL }), {
      maxSteps: 2,
    });
    expect(result).toMatchObject({ answer: '', steps: 2, stepLimitReached: true });
  });
});
