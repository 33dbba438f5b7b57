import { z } from 'zod';
import type { Scope } from '../foundation/scope.js';
import { compactSchema } from './compact-schema.js';
import type { SeenVersions } from './seen-versions.js';

export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/** What a tool handler gets besides its arguments. The scope is the turn's; tools never choose the user. */
export interface ToolContext {
  scope: Readonly<Scope>;
  toolCallId: string;
  signal?: AbortSignal;
  /**
   * Versions of the records the model has been shown in this conversation; tools that edit a record pass
   * the shown version as `expectedVersion`. Absent outside a Conversation (then edits are unchecked).
   */
  seen?: SeenVersions;
  /**
   * The user's message of the turn the call belongs to (a Conversation fills it in): what a tool that
   * stores text checks it against, so the user's own words are never taken for an injection.
   */
  userMessage?: string;
}

/**
 * A framework-neutral tool: a name, a description for the model, zod parameters and a handler.
 * The handler returns a string (sent as is) or any JSON-serializable value (sent as JSON).
 */
export interface Tool<P extends z.ZodObject = z.ZodObject> {
  readonly name: string;
  readonly description: string;
  readonly parameters: P;
  /**
   * True for a tool that reads memory (a search, a retrieve by id). When a turn skipped recall and the
   * model calls it, the turn's ledger notes it (`RecallDecision.forcedBy`).
   */
  readonly recall?: boolean;
  execute(args: z.output<P>, context: ToolContext): unknown;
}

/** Tools that belong together (e.g. the plan-mode tools), registered as one. */
export interface Toolkit {
  readonly name: string;
  readonly tools: readonly Tool[];
}

/** Declare a tool with its argument types inferred from the zod schema. */
export function defineTool<P extends z.ZodObject>(tool: Tool<P>): Tool {
  if (!TOOL_NAME_PATTERN.test(tool.name)) throw new Error(`Invalid tool name "${tool.name}"`);
  return tool as unknown as Tool;
}

/**
 * The OpenAI Chat Completions `tools` entry for a tool: JSON Schema generated from zod, without the
 * keywords that only validate (`compactSchema`; the zod schema checks every call's arguments anyway).
 */
export interface OpenAIToolDefinition {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export function toOpenAITool(tool: Tool): OpenAIToolDefinition {
  const schema = z.toJSONSchema(tool.parameters, { target: 'draft-7', io: 'input', unrepresentable: 'any' });
  const { $schema: _ignored, ...parameters } = compactSchema(schema) as Record<string, unknown>;
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters } };
}
