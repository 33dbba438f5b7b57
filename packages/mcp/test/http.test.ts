import { request } from 'node:http';
import { createInMemoryStores } from '@kioku/core';
import { describe, expect, it } from 'vitest';
import { memoryTools, serveHttp } from '../src/index.js';
import { ALICE, call, connect, startHttp } from './helpers.js';

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
};

/** A JSON-RPC response body. */
async function jsonOf(res: Response) {
  return (await res.json()) as { error: { code: number; message: string }; result: Record<string, unknown> };
}

/** A raw POST of an initialize request, as curl would send it. */
function post(url: string, headers: Record<string, string> = {}, body: string = JSON.stringify(INITIALIZE)) {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body,
  });
}

/** A raw POST with a chosen Host header (fetch may not set one); resolves to the status. */
function postWithHost(url: string, host: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
        host,
      },
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end(JSON.stringify(INITIALIZE));
  });
}

describe('authentication', () => {
  it('answers a request without a token with 401 and a Bearer challenge', async () => {
    const server = await startHttp();
    const res = await post(server.url);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="kioku"');
    expect(await jsonOf(res)).toMatchObject({
      error: { message: expect.stringMatching(/Authorization required/) },
    });
    await expect(connect(server.url)).rejects.toThrow();
  });

  it('answers a wrong, malformed or non-Bearer token with 401 invalid_token', async () => {
    const server = await startHttp();
    for (const authorization of [
      `Bearer ${ALICE.slice(0, -1)}x`,
      'Bearer',
      `Basic ${Buffer.from(`alice:${ALICE}`).toString('base64')}`,
      `Bearer ${ALICE} extra`,
    ]) {
      const res = await post(server.url, { authorization });
      expect(res.status, authorization).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="kioku", error="invalid_token"/);
    }
    await expect(connect(server.url, 'x'.repeat(43))).rejects.toThrow();
    expect((await post(server.url, { authorization: `bearer ${ALICE}` })).status).toBe(200);
  });
});

describe('requests', () => {
  it('refuses a foreign Host or Origin (DNS rebinding) with 403 and accepts localhost ones', async () => {
    const server = await startHttp({ allowedOrigins: ['https://app.example.com'] });
    const auth = { authorization: `Bearer ${ALICE}` };
    expect(await postWithHost(server.url, 'evil.example.com', auth)).toBe(403);
    expect(await postWithHost(server.url, `evil.example.com:${server.port}`, auth)).toBe(403);
    expect(await postWithHost(server.url, `[::1]:${server.port}`, auth)).toBe(200);
    expect((await post(server.url, { ...auth, origin: 'http://evil.example.com' })).status).toBe(403);
    expect((await post(server.url, { ...auth, origin: 'null' })).status).toBe(403);
    expect(await postWithHost(server.url, `localhost:${server.port}`, auth)).toBe(200);
    expect((await post(server.url, { ...auth, origin: `http://localhost:${server.port}` })).status).toBe(200);
    expect((await post(server.url, { ...auth, origin: 'https://app.example.com' })).status).toBe(200);
  });

  it('refuses a body over maxBodyBytes with 413 before reading it, and a declared or streamed one alike', async () => {
    const server = await startHttp({ limits: { maxBodyBytes: 2_048 } });
    const auth = { authorization: `Bearer ${ALICE}` };
    const big = JSON.stringify({ ...INITIALIZE, params: { ...INITIALIZE.params, pad: 'x'.repeat(4_000) } });
    const res = await post(server.url, auth, big);
    expect(res.status).toBe(413);
    expect((await jsonOf(res)).error.message).toBe('The request body is over 2048 bytes.');
    // Streamed without a Content-Length.
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big));
        controller.close();
      },
    });
    const streamed = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...auth },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
    // The server is still there for everyone else.
    expect(await call(await connect(server.url, ALICE), 'search_memory', { query: 'x' })).toEqual({
      details: [],
      facts: [],
    });
  });

  it('answers a tool call too large for the body limit with 413 and keeps nothing', async () => {
    const server = await startHttp({ limits: { maxBodyBytes: 8_192 } });
    const client = await connect(server.url, ALICE);
    await expect(
      client.callTool({
        name: 'store_memory',
        arguments: { content: 'z'.repeat(10_000), description: 'big' },
      }),
    ).rejects.toThrow(/request body is over 8192 bytes/);
    expect(await server.stores.details.list({ userId: 'alice' })).toEqual([]);
  });

  it('is stateless: GET and DELETE are 405, other paths 404, bad JSON 400', async () => {
    const server = await startHttp();
    const auth = { authorization: `Bearer ${ALICE}` };
    const get = await fetch(server.url, { headers: { ...auth, accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect((await fetch(server.url, { method: 'DELETE', headers: auth })).status).toBe(405);
    expect((await post(server.url.replace('/mcp', '/other'), auth)).status).toBe(404);
    const bad = await post(server.url, auth, '{"jsonrpc":');
    expect(bad.status).toBe(400);
    expect((await jsonOf(bad)).error.code).toBe(-32700);
    const ok = await post(server.url, auth);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('mcp-session-id')).toBeNull();
    expect((await jsonOf(ok)).result).toMatchObject({
      protocolVersion: '2025-06-18',
      serverInfo: { name: 'kioku' },
    });
  });

  it('negotiates every protocol version the SDK supports, and offers its latest otherwise', async () => {
    const server = await startHttp();
    const auth = { authorization: `Bearer ${ALICE}` };
    for (const version of ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25']) {
      const res = await post(
        server.url,
        auth,
        JSON.stringify({ ...INITIALIZE, params: { ...INITIALIZE.params, protocolVersion: version } }),
      );
      expect((await jsonOf(res)).result.protocolVersion).toBe(version);
    }
    const future = await post(
      server.url,
      auth,
      JSON.stringify({ ...INITIALIZE, params: { ...INITIALIZE.params, protocolVersion: '2099-01-01' } }),
    );
    expect((await jsonOf(future)).result.protocolVersion).toBe('2025-11-25');
  });
});

describe('binding', () => {
  it('refuses to serve a fixed user without tokens on a non-loopback address', async () => {
    const stores = createInMemoryStores();
    await expect(
      serveHttp({
        stores,
        tools: memoryTools(stores),
        host: '0.0.0.0',
        port: 0,
        auth: { identity: { userId: 'alice' } },
      }),
    ).rejects.toThrow(/Refusing to serve 0\.0\.0\.0 without tokens/);
  });

  it('serves a fixed user without tokens on loopback', async () => {
    const server = await startHttp({ auth: { identity: { userId: 'carol' } } });
    const client = await connect(server.url);
    await call(client, 'store_memory', { content: 'hello', description: 'greeting' });
    expect(await server.stores.details.list({ userId: 'carol' })).toHaveLength(1);
  });
});
