import { PlanSchema } from '@kioku/core/store';
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/**
 * What MCP adds to a Kioku tool: a title, behaviour hints for the client (read-only, destructive,
 * idempotent; every tool acts on the user's memory only, so none is open-world), the schema of its
 * structured result, and how its output becomes that result.
 */
export interface McpToolInfo {
  title: string;
  annotations: ToolAnnotations;
  outputSchema: z.ZodObject;
  /** The tool's output (a string or a JSON value) as a structured result; strings become `{ text }`. */
  structure?: (output: unknown) => Record<string, unknown>;
}

const TextResult = z.object({ text: z.string().describe('What the tool did, in a sentence or a listing.') });

const DetailHit = z.object({
  id: z.string(),
  ref: z.string().describe('The [MemoryRef: id - description - N tokens] placeholder.'),
  type: z.string(),
  source: z.string().describe('Who wrote it: tool:<name>, or its type.'),
  summary: z.string().nullable(),
  createdAt: z.string(),
});

const FactHit = z.object({
  id: z.string(),
  category: z.string(),
  tags: z.array(z.string()),
  content: z.string(),
  source: z.string().describe('Who wrote it: user, assistant, tool:<name>, extracted, dream, …'),
  score: z.number(),
});

const readOnly = { readOnlyHint: true, openWorldHint: false } as const;
const adds = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
} as const;
const replaces = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: true,
  openWorldHint: false,
} as const;

function text(title: string, annotations: ToolAnnotations): McpToolInfo {
  return { title, annotations, outputSchema: TextResult };
}

/** The MCP side of every tool the server can offer, by tool name. */
export const MCP_TOOL_INFO: Readonly<Record<string, McpToolInfo>> = Object.freeze({
  store_memory: {
    title: 'Store memory',
    annotations: adds,
    outputSchema: z.object({ id: z.string(), ref: z.string(), type: z.string(), tokens: z.number().int() }),
  },
  retrieve_memory: {
    title: 'Retrieve memory',
    annotations: { ...readOnly, idempotentHint: true },
    outputSchema: z.object({ content: z.string().describe('The stored content, exactly as it was stored.') }),
    structure: (output) => ({ content: output }),
  },
  search_memory: {
    title: 'Search memory',
    annotations: readOnly,
    outputSchema: z.object({ details: z.array(DetailHit), facts: z.array(FactHit) }),
  },
  // A near-duplicate is updated only with a text that says all the old one did; nothing is lost.
  save_memory: text('Save a fact', adds),
  update_memory: text('Update a fact', replaces),
  delete_memory: text('Delete a fact', replaces),
  list_memory_categories: text('List fact categories', readOnly),
  get_plan: {
    title: 'Get the plan',
    annotations: readOnly,
    outputSchema: z.object({ plan: PlanSchema.nullable() }),
  },
  create_plan: text('Create a plan', { ...adds, destructiveHint: true }),
  update_plan_step: text('Update a plan step', replaces),
  add_plan_step: text('Add a plan step', adds),
  add_context_note: text('Add a context note', adds),
  complete_plan: text('Complete the plan', { ...adds, idempotentHint: true }),
  save_to_working_memory: {
    title: 'Save to working memory',
    annotations: replaces,
    outputSchema: z.object({ saved: z.string(), expiresIn: z.string(), expiresAt: z.string() }),
  },
  get_from_working_memory: {
    title: 'Get from working memory',
    annotations: readOnly,
    outputSchema: z.object({ value: z.string().describe('The stored value, exactly as it was saved.') }),
    structure: (output) => ({ value: output }),
  },
  list_working_memory: text('List working memory', readOnly),
  search_working_memory: text('Search working memory', readOnly),
});

/** A tool's output as its structured result. */
export function structuredResult(info: McpToolInfo, output: unknown): Record<string, unknown> {
  if (info.structure) return info.structure(output);
  if (typeof output === 'string') return { text: output };
  if (output !== null && typeof output === 'object' && !Array.isArray(output)) {
    return output as Record<string, unknown>;
  }
  throw new Error(
    `A tool output of type ${Array.isArray(output) ? 'array' : typeof output} has no structure`,
  );
}
