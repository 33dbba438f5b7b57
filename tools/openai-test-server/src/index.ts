import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  body: Record<string, unknown>;
  /** The attempt of the call this request is (0 first; the OpenAI SDK's `x-stainless-retry-count`). */
  attempt: number;
}

export type Reply = (res: ServerResponse, body: Record<string, unknown>, req: IncomingMessage) => void;

/**
 * A scripted OpenAI-compatible server on 127.0.0.1 (port 0): each request gets the next reply of the
 * script, or, given one reply instead of a script, that reply answers every request (a router that looks
 * at the path, say); every request body is kept for assertions.
 */
export async function startScriptedServer(script: Reply[] | Reply) {
  const received: Received[] = [];
  let next = 0;
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => {
      raw += chunk;
    });
    req.on('end', () => {
      const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      received.push({
        path: req.url ?? '',
        body,
        attempt: Number(req.headers['x-stainless-retry-count'] ?? 0),
      });
      const reply = typeof script === 'function' ? script : script[next++];
      if (!reply) return json(res, 500, { error: { message: 'script exhausted' } });
      reply(res, body, req);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** A completion with one choice; `extra` goes at the top level of the body (e.g. `usage(…)`). */
export function completion(message: Record<string, unknown>, extra: Record<string, unknown> = {}): Reply {
  return (res) =>
    json(res, 200, {
      id: 'chatcmpl-test',
      object: 'chat.completion',
      created: 0,
      model: 'test-model',
      choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', ...message } }],
      ...extra,
    });
}

/** The `usage` field of a completion, as `extra` of `completion` or `text`. */
export const usage = (promptTokens: number, completionTokens: number) => ({
  usage: {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  },
});

export const text = (content: string, extra: Record<string, unknown> = {}): Reply =>
  completion({ content }, extra);

export function toolCalls(...calls: { id: string; name: string; arguments: unknown }[]): Reply {
  return completion({
    content: null,
    tool_calls: calls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: JSON.stringify(c.arguments) },
    })),
  });
}

/**
 * An SSE reply made of chunk deltas, as the streaming API sends them; with `finishReason`, a last chunk
 * carries it (as OpenAI's final chunk does).
 */
export function sse(deltas: Record<string, unknown>[], options: { finishReason?: string } = {}): Reply {
  return (res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunks = deltas.map((delta) => ({ delta, finish_reason: null as string | null }));
    if (options.finishReason) chunks.push({ delta: {}, finish_reason: options.finishReason });
    for (const { delta, finish_reason } of chunks) {
      const chunk = {
        id: 'chatcmpl-test',
        object: 'chat.completion.chunk',
        created: 0,
        model: 'test-model',
        choices: [{ index: 0, delta, finish_reason }],
      };
      res.write(`data: ${JSON.stringify(chunk)}\n\n`);
    }
    res.write('data: [DONE]\n\n');
    res.end();
  };
}

export const streamText = (...parts: string[]): Reply => sse(parts.map((content) => ({ content })));

/** An error response; `message` is the error's message (default `scripted <code>`). */
export const status =
  (code: number, headers: Record<string, string> = {}, message = `scripted ${code}`): Reply =>
  (res) =>
    json(res, code, { error: { message, type: 'test' } }, headers);

/** Never answers (until the client gives up or the server closes). */
export const hang: Reply = () => {};

/**
 * One reply per attempt of the same call: the first reply answers attempt 0, the second the first retry,
 * and so on (the OpenAI SDK numbers its attempts in the `x-stainless-retry-count` header). Bound to the
 * attempt, not to the order requests arrive in: a timed-out attempt that never reached the server cannot
 * make its reply answer the retry. Pass it as the whole script: `startScriptedServer(byAttempt(hang, text('ok')))`.
 */
export function byAttempt(...replies: Reply[]): Reply {
  return (res, body, req) => {
    const attempt = Number(req.headers['x-stainless-retry-count'] ?? 0);
    const reply = replies[attempt];
    if (!reply) return json(res, 500, { error: { message: `no reply scripted for attempt ${attempt}` } });
    reply(res, body, req);
  };
}
