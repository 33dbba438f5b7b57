import { createInMemoryStores } from '@kioku/core';
import { traceStores } from '@kioku/core/store';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { ALICE, call, callError, connect, startHttp } from './helpers.js';

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

const SECRET = 'SECRET-planted-4412';

describe('OpenTelemetry: MCP tool calls', () => {
  it('one span per tool call, with the tool name and no argument content; store calls nest in it', async () => {
    const exporter = new InMemorySpanExporter();
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const stores = traceStores(createInMemoryStores(), {
      tracerProvider,
      detail: 'store',
      memoryStoreSpans: true,
    });
    const server = await startHttp({ stores, telemetry: { tracerProvider } });
    const client = await connect(server.url, ALICE);
    const saved = await call(client, 'save_memory', { content: `My locker code is ${SECRET}` });
    const id = /Saved memory (\w+)/.exec(String(saved.text))![1]!;
    await call(client, 'search_memory', { query: `locker ${SECRET}` });
    await callError(client, 'delete_memory', { id: 'no-such-fact' });

    const spans = exporter.getFinishedSpans();
    const tools = spans.filter((s) => s.name.startsWith('execute_tool '));
    expect(tools.map((s) => s.name)).toEqual([
      'execute_tool save_memory',
      'execute_tool search_memory',
      'execute_tool delete_memory',
    ]);
    for (const span of tools) {
      expect(span.parentSpanContext).toBeUndefined();
      expect(span.attributes).toMatchObject({
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': span.name.slice('execute_tool '.length),
        'mcp.method.name': 'tools/call',
        'kioku.user.id': expect.stringMatching(/^[0-9a-f]{16}$/),
      });
    }
    expect(tools[0]!.attributes['error.type']).toBeUndefined();
    expect(tools[2]!.attributes['error.type']).toBe('tool_error');
    // The store calls a tool call made are its children.
    const create = spans.find((s) => s.name === 'create facts');
    expect(create?.parentSpanContext?.spanId).toBe(tools[0]!.spanContext().spanId);
    // Private by default: no argument, result or user id in any attribute.
    const text = spans.flatMap((s) => [s.name, ...Object.values(s.attributes).map(String)]).join('\n');
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('locker');
    expect(text).not.toContain(id);
    expect(text).not.toContain('alice');
  });
});
