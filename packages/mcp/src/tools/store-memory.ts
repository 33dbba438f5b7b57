import { defineTool, type Tool } from '@kioku/core';
import { formatMemoryRef } from '@kioku/core/adapter';
import { DetailInputSchema, type DetailStore } from '@kioku/core/store';
import { z } from 'zod';

export const STORE_MEMORY_TOOL = 'store_memory';

/** What a detail stored through MCP is, when the caller does not say. */
export const DEFAULT_DETAIL_TYPE = 'note';

const { content, description, summary, type } = DetailInputSchema.shape;

/**
 * `store_memory(content, description, type?, summary?)`: stores a memory in the detail layer. Keeps the content
 * in the user's detail store (the same records tool-output offload writes) and answers with its id and
 * `[MemoryRef: …]` placeholder; `retrieve_memory` reads it back, `search_memory` finds it. The detail
 * store's rules apply (size limits, text domain, token count).
 */
export function storeMemoryTool(details: DetailStore): Tool {
  return defineTool({
    name: STORE_MEMORY_TOOL,
    description:
      'Store a piece of content (a command output, a document, notes) in detail memory so it can be read ' +
      'back later by id with retrieve_memory or found with search_memory. Give a brief description; it ' +
      'is what searches and placeholders show.',
    parameters: z.object({
      content: content.describe('The full content to keep.'),
      description: description.describe('A brief description, e.g. "npm install output (Node 20)".'),
      type: type
        .unwrap()
        .optional()
        .describe(
          `A snake_case kind such as "command_output" or "user_preference" (default "${DEFAULT_DETAIL_TYPE}").`,
        ),
      summary: summary.describe('An optional short summary shown with search results.'),
    }),
    async execute(args, { scope }) {
      const detail = await details.create(scope, {
        type: args.type ?? DEFAULT_DETAIL_TYPE,
        description: args.description,
        content: args.content,
        ...(args.summary === undefined ? {} : { summary: args.summary }),
        metadata: { source: 'mcp' },
      });
      return {
        id: detail.id,
        ref: formatMemoryRef({ id: detail.id, description: detail.description, tokens: detail.tokenCount }),
        type: detail.type,
        tokens: detail.tokenCount,
      };
    },
  });
}
