import { randomUUID } from 'node:crypto';
import type { Tool, ToolContext } from '@kioku/core';
import { executeToolCall } from '@kioku/core/model';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type McpToolInfo, structuredResult } from './describe.js';
import { tooLarge } from './output.js';

/** A tool error as a model reads it: the JSON error object `executeToolCall` returns, in one text block. */
function errorResult(content: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: content }] };
}

/**
 * Run one MCP tool call through `executeToolCall`, the path every tool call of a conversation takes: the
 * arguments are validated with the tool's zod schema and Kioku errors come back as a JSON error result
 * with a stable code (`VALIDATION`, `NOT_FOUND`, `CONFLICT`, …), here with `isError: true`. A success is
 * a structured result, with the same JSON in a text block (what clients without structured output read):
 * memory content is always a JSON string value, never text run together with anything else.
 */
export async function callTool(
  tool: Tool,
  info: McpToolInfo,
  args: unknown,
  context: Omit<ToolContext, 'toolCallId'>,
  maxOutputBytes: number,
): Promise<CallToolResult> {
  let output: unknown;
  const capturing: Tool = {
    ...tool,
    execute: async (parsed, toolContext) => {
      output = await tool.execute(parsed, toolContext);
      return output;
    },
  };
  const result = await executeToolCall(
    new Map([[tool.name, capturing]]),
    { id: randomUUID(), name: tool.name, arguments: JSON.stringify(args ?? {}) },
    context,
  );
  if (result.isError) return errorResult(result.content);
  const structuredContent = structuredResult(info, output);
  const text = JSON.stringify(structuredContent);
  const bytes = Buffer.byteLength(text);
  if (bytes > maxOutputBytes)
    return errorResult(JSON.stringify(tooLarge(`${tool.name}'s result`, bytes, maxOutputBytes)));
  return { content: [{ type: 'text', text }], structuredContent };
}
