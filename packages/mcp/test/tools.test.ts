import { createInMemoryStores } from '@kioku/core';
import { toOpenAITool } from '@kioku/core/model';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { MCP_TOOL_INFO } from '../src/describe.js';
import { memoryTools, OUTPUT_TOO_LARGE, TOOLSETS } from '../src/index.js';
import { TOOLSET_TOOLS } from '../src/toolsets.js';
import { ALICE, call, callError, connect, startHttp } from './helpers.js';

describe('tools/list', () => {
  it('offers the details toolset by default: store, retrieve and search', async () => {
    const server = await startHttp({ toolsets: ['details'] });
    const { tools } = await (await connect(server.url, ALICE)).listTools();
    expect(tools.map((t) => t.name)).toEqual(['store_memory', 'retrieve_memory', 'search_memory']);
  });

  it('describes every tool: title, annotations, output schema, and the tool’s own input schema', async () => {
    const server = await startHttp({ toolsets: [...TOOLSETS] });
    const { tools } = await (await connect(server.url, ALICE)).listTools();
    const names = [...new Set(TOOLSETS.flatMap((set) => TOOLSET_TOOLS[set]))];
    expect(tools.map((t) => t.name).sort()).toEqual(names.sort());
    const own = memoryTools(createInMemoryStores(), [...TOOLSETS]);
    for (const tool of tools) {
      const info = MCP_TOOL_INFO[tool.name]!;
      expect(tool.title, tool.name).toBe(info.title);
      expect(tool.annotations, tool.name).toEqual({ title: info.title, ...info.annotations });
      expect(tool.annotations?.openWorldHint, tool.name).toBe(false);
      expect(tool.outputSchema?.type, tool.name).toBe('object');
      // What a conversation sends a model is what an MCP client sees.
      const { $schema: _ignored, ...input } = tool.inputSchema as Record<string, unknown>;
      expect(input, tool.name).toEqual(toOpenAITool(own.get(tool.name)!).function.parameters);
      expect(tool.description).toBe(own.get(tool.name)!.description);
    }
    const hints = Object.fromEntries(tools.map((t) => [t.name, t.annotations]));
    expect(hints.retrieve_memory).toMatchObject({ readOnlyHint: true, idempotentHint: true });
    expect(hints.search_memory?.readOnlyHint).toBe(true);
    expect(hints.store_memory).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    expect(hints.delete_memory).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
    });
    expect(hints.create_plan).toMatchObject({ destructiveHint: true });
  });
});

describe('each toolset', () => {
  it('facts: save, search, update, list categories, delete — with dedup as in a conversation', async () => {
    const server = await startHttp({ toolsets: ['details', 'facts'] });
    const client = await connect(server.url, ALICE);
    const saved = await call(client, 'save_memory', {
      content: 'Prefers TypeScript over Python for new services',
      category: 'user-preferences/languages',
      tags: ['code'],
    });
    const id = /Saved memory (\w+)/.exec(String(saved.text))![1]!;
    expect(
      (await call(client, 'save_memory', { content: 'Prefers TypeScript over Python for new services' }))
        .text,
    ).toMatch(/^Skipped: memory/);
    const found = await call(client, 'search_memory', { query: 'TypeScript services' });
    expect(found.facts).toEqual([
      expect.objectContaining({
        id,
        category: 'user-preferences/languages',
        tags: ['code'],
        score: expect.any(Number),
      }),
    ]);
    const filtered = await call(client, 'search_memory', {
      query: 'TypeScript',
      category: 'user-preferences',
    });
    expect(filtered).toEqual({ details: [], facts: [expect.objectContaining({ id })] });
    await call(client, 'update_memory', { id, content: 'Prefers TypeScript, or Go for CLIs' });
    expect((await call(client, 'list_memory_categories')).text).toContain('languages');
    expect((await call(client, 'delete_memory', { id })).text).toBe(`Deleted memory ${id}.`);
    expect((await callError(client, 'delete_memory', { id })).code).toBe('NOT_FOUND');
    expect((await callError(client, 'update_memory', { id: 'x' })).code).toBe('VALIDATION');
  });

  it('plans: create, read, edit and complete the thread’s plan', async () => {
    const server = await startHttp({ toolsets: ['plans'] });
    const client = await connect(server.url, ALICE);
    expect(await call(client, 'get_plan')).toEqual({ plan: null });
    expect((await callError(client, 'update_plan_step', { step_id: '1', status: 'completed' })).code).toBe(
      'NOT_FOUND',
    );
    await call(client, 'create_plan', { goal: 'Ship the MCP server', steps: ['Write it', 'Test it'] });
    await call(client, 'update_plan_step', { step_id: 1, status: 'completed', notes: 'done' });
    await call(client, 'add_plan_step', { description: 'Document it' });
    await call(client, 'add_context_note', { note: 'Clients: Claude, Cursor, VS Code' });
    expect((await callError(client, 'update_plan_step', { step_id: '1', status: 'finished' })).code).toBe(
      'VALIDATION',
    );
    expect((await call(client, 'complete_plan')).text).toMatch(
      /^Completed plan .*\(2 steps were not completed\)$/,
    );
    const { plan } = (await call(client, 'get_plan')) as { plan: Record<string, unknown> };
    expect(plan).toMatchObject({
      goal: 'Ship the MCP server',
      isComplete: true,
      threadId: 'mcp',
      userId: 'alice',
    });
    expect(plan.steps).toHaveLength(3);
  });

  it('working: save, get, list and search in the connection’s own namespace; kioku/ is refused', async () => {
    const server = await startHttp({ toolsets: ['working'] });
    const client = await connect(server.url, ALICE);
    const saved = await call(client, 'save_to_working_memory', {
      key: 'inbox',
      data: '12 unread mails',
      tags: ['email'],
    });
    expect(saved).toMatchObject({ saved: 'session/mcp/inbox', expiresIn: expect.any(String) });
    expect(await call(client, 'get_from_working_memory', { key: 'inbox' })).toEqual({
      value: '12 unread mails',
    });
    expect((await call(client, 'list_working_memory')).text).toContain('session/mcp/inbox');
    expect((await call(client, 'search_working_memory', { query: 'unread' })).text).toContain(
      '12 unread mails',
    );
    expect((await callError(client, 'get_from_working_memory', { key: 'kioku/lease' })).code).toBe(
      'VALIDATION',
    );
    expect(
      (await callError(client, 'save_to_working_memory', { key: 'session/other/x', data: 'y' })).code,
    ).toBe('SCOPE');
  });
});

describe('limits', () => {
  it('refuses a result over maxOutputBytes with OUTPUT_TOO_LARGE, and the record stays readable', async () => {
    const server = await startHttp({ limits: { maxOutputBytes: 4_096 } });
    const client = await connect(server.url, ALICE);
    const { id } = await call(client, 'store_memory', { content: 'y'.repeat(10_000), description: 'big' });
    const error = await callError(client, 'retrieve_memory', { id: id as string });
    expect(error.code).toBe(OUTPUT_TOO_LARGE);
    expect(error.message).toMatch(/over this server's limit of 4096 bytes/);
    expect((await server.stores.details.get({ userId: 'alice' }, id as string))?.content).toHaveLength(
      10_000,
    );
  });

  it('refuses arguments with too many elements before parsing them', async () => {
    const server = await startHttp({ limits: { maxArgumentElements: 50 } });
    const client = await connect(server.url, ALICE);
    const result = (await client.callTool({
      name: 'search_memory',
      arguments: { query: 'x', tags: Array.from({ length: 100 }, (_, i) => `t${i}`) },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toMatch(/more than the maximum of 50 elements/);
  });
});
