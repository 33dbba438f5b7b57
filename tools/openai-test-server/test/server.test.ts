import { describe, expect, it } from 'vitest';
import { byAttempt, sse, startScriptedServer, status, text, usage } from '../src/index.js';

async function post(url: string, body: unknown) {
  const res = await fetch(url, { method: 'POST', body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('startScriptedServer', () => {
  it('answers each request with the next scripted reply and keeps every request body', async () => {
    const server = await startScriptedServer([text('first'), status(429)]);
    try {
      const url = `${server.baseURL}/chat/completions`;
      const one = await post(url, { model: 'm', messages: [{ role: 'user', content: 'hi' }] });
      expect(one.status).toBe(200);
      expect(one.body).toMatchObject({ choices: [{ message: { role: 'assistant', content: 'first' } }] });
      expect((await post(url, { n: 2 })).status).toBe(429);
      // Past the end of the script: a 500 the client sees as a server error.
      expect(await post(url, {})).toEqual({ status: 500, body: { error: { message: 'script exhausted' } } });
      expect(server.received.map((r) => r.path)).toEqual([
        '/v1/chat/completions',
        '/v1/chat/completions',
        '/v1/chat/completions',
      ]);
      expect(server.received[1]!.body).toEqual({ n: 2 });
    } finally {
      await server.close();
    }
  });
  it('given one reply instead of a script, answers every request with it', async () => {
    const server = await startScriptedServer((res, _body, req) =>
      status(req.url?.endsWith('/a') ? 201 : 202)(res, {}, req),
    );
    try {
      const codes = [];
      for (const path of ['/a', '/b', '/a'])
        codes.push((await fetch(`${server.baseURL}${path}`, { method: 'POST' })).status);
      expect(codes).toEqual([201, 202, 201]);
      expect(server.received).toHaveLength(3);
    } finally {
      await server.close();
    }
  });
  it('answers each attempt of a call with its own reply (by the retry-count header), in any order', async () => {
    const server = await startScriptedServer(byAttempt(status(503), text('retried')));
    try {
      const url = `${server.baseURL}/chat/completions`;
      const attempt = async (n: number) => {
        const res = await fetch(url, { method: 'POST', headers: { 'x-stainless-retry-count': String(n) } });
        return res.status;
      };
      // The retry arrives first (its attempt 0 never reached the server): it still gets the retry's reply.
      expect(await attempt(1)).toBe(200);
      expect(await attempt(0)).toBe(503);
      expect(await attempt(2)).toBe(500);
      expect(server.received.map((r) => r.attempt)).toEqual([1, 0, 2]);
    } finally {
      await server.close();
    }
  });
  it('ends a stream with a finish chunk when asked', async () => {
    const server = await startScriptedServer([sse([{ content: 'Hi' }], { finishReason: 'stop' })]);
    try {
      const res = await fetch(`${server.baseURL}/chat/completions`, { method: 'POST' });
      const chunks = (await res.text())
        .split('\n\n')
        .filter((line) => line.startsWith('data: {'))
        .map(
          (line) => JSON.parse(line.slice(6)) as { choices: { delta: unknown; finish_reason: unknown }[] },
        );
      expect(chunks.map((c) => c.choices[0])).toEqual([
        { index: 0, delta: { content: 'Hi' }, finish_reason: null },
        { index: 0, delta: {}, finish_reason: 'stop' },
      ]);
    } finally {
      await server.close();
    }
  });
  it('scripts error messages and usage', async () => {
    const server = await startScriptedServer([
      status(400, {}, "'response_format' of type 'json_schema' is not supported"),
      text('{}', usage(12, 3)),
    ]);
    try {
      const url = `${server.baseURL}/chat/completions`;
      expect(await post(url, {})).toEqual({
        status: 400,
        body: {
          error: { message: "'response_format' of type 'json_schema' is not supported", type: 'test' },
        },
      });
      expect((await post(url, {})).body).toMatchObject({
        choices: [{ message: { content: '{}' } }],
        usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 },
      });
    } finally {
      await server.close();
    }
  });
});
