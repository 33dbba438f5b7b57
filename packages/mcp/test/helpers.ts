import { createInMemoryStores, type KiokuStores, type TelemetryOptions } from '@kioku/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, expect } from 'vitest';
import {
  type HttpAuth,
  type McpLimits,
  type MemoryToolsOptions,
  memoryTools,
  newToken,
  type RunningHttpServer,
  serveHttp,
  TokenTable,
  type Toolset,
} from '../src/index.js';

export const ALICE = newToken().token;
export const BOB = newToken().token;
export const ALICE_CODER = newToken().token;

/** A tokens file: alice, bob, and alice as agent "coder". */
export const TOKENS_FILE = JSON.stringify({
  tokens: [
    { user: 'alice', token: ALICE },
    { user: 'bob', token: BOB },
    { user: 'alice', agent: 'coder', token: ALICE_CODER },
  ],
});

const running: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const item of running.splice(0).reverse()) await item.close();
});

export interface TestServer extends RunningHttpServer {
  stores: KiokuStores;
}

/** A loopback HTTP server over in-memory stores (or `stores`), closed after the test. */
export async function startHttp(
  options: {
    toolsets?: Toolset[];
    auth?: HttpAuth;
    limits?: Partial<McpLimits>;
    stores?: KiokuStores;
    allowedOrigins?: string[];
    tools?: MemoryToolsOptions;
    telemetry?: TelemetryOptions;
  } = {},
): Promise<TestServer> {
  const stores = options.stores ?? createInMemoryStores();
  const server = await serveHttp({
    stores,
    tools: memoryTools(stores, options.toolsets ?? ['details', 'facts', 'plans', 'working'], options.tools),
    host: '127.0.0.1',
    port: 0,
    auth: options.auth ?? { tokens: TokenTable.parse(TOKENS_FILE) },
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.allowedOrigins ? { allowedOrigins: options.allowedOrigins } : {}),
    ...(options.telemetry ? { telemetry: options.telemetry } : {}),
    onError: (error) => {
      throw error;
    },
  });
  running.push(server);
  return { ...server, stores };
}

/** An SDK client connected to `url` with a bearer token (none when undefined), closed after the test. */
export async function connect(url: string, token?: string): Promise<Client> {
  const client = new Client({ name: 'kioku-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: token === undefined ? {} : { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  running.push(client);
  return client;
}

/** Call a tool that must succeed; its structured result. */
export async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  // The text block is the same JSON as the structured result (for clients without structured output).
  expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(result.structuredContent);
  return result.structuredContent as Record<string, unknown>;
}

/** Call a tool that must fail; its JSON error object `{ code, message, details? }`. */
export async function callError(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.isError, JSON.stringify(result.content)).toBe(true);
  expect(result.structuredContent).toBeUndefined();
  const { error } = JSON.parse((result.content[0] as { text: string }).text) as {
    error: { code: string; message: string; details?: unknown };
  };
  return error;
}
