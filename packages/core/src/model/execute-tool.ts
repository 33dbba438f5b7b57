import { isKiokuError } from '../foundation/errors.js';
import type { ToolCall } from './messages.js';
import type { Tool, ToolContext } from './tool.js';

export interface ToolResult {
  toolCallId: string;
  name: string;
  /** What goes back to the model: the handler's output, or a JSON error object. */
  content: string;
  isError: boolean;
  /** Stable error code when `isError` (`UNKNOWN_TOOL`, `INVALID_JSON`, `VALIDATION`, `NOT_FOUND`, …). */
  errorCode?: string;
}

function errorResult(call: ToolCall, code: string, message: string, details?: unknown): ToolResult {
  const body = details === undefined ? { error: { code, message } } : { error: { code, message, details } };
  return {
    toolCallId: call.id,
    name: call.name,
    content: JSON.stringify(body),
    isError: true,
    errorCode: code,
  };
}

/**
 * Run one tool call from a model. Never throws for anything the model controls: an unknown tool, arguments
 * that are not JSON or fail the schema, and Kioku errors from the stores come back as a JSON error result
 * the model can read and correct. Unexpected errors (bugs, I/O) also become results, with code `TOOL_FAILED`.
 */
export async function executeToolCall(
  tools: ReadonlyMap<string, Tool>,
  call: ToolCall,
  context: Omit<ToolContext, 'toolCallId'>,
): Promise<ToolResult> {
  const tool = tools.get(call.name);
  if (!tool) {
    return errorResult(
      call,
      'UNKNOWN_TOOL',
      `No tool named "${call.name}". Available: ${[...tools.keys()].join(', ')}`,
    );
  }
  let raw: unknown;
  try {
    raw = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
  } catch (error) {
    return errorResult(
      call,
      'INVALID_JSON',
      `Arguments for ${call.name} are not valid JSON: ${(error as Error).message}`,
    );
  }
  const parsed = tool.parameters.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({
      path: i.path.join('.') || '(root)',
      message: i.message,
    }));
    return errorResult(
      call,
      'VALIDATION',
      `Invalid arguments for ${call.name}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
      issues,
    );
  }
  try {
    const output = await tool.execute(parsed.data, { ...context, toolCallId: call.id });
    const content = typeof output === 'string' ? output : JSON.stringify(output ?? null);
    return { toolCallId: call.id, name: call.name, content, isError: false };
  } catch (error) {
    if (isKiokuError(error)) return errorResult(call, error.code, error.message);
    return errorResult(
      call,
      'TOOL_FAILED',
      `${call.name} failed: ${(error as Error)?.message ?? String(error)}`,
    );
  }
}
