import { defineTool, type Tool, type ToolContext } from '@kioku/core';
import { CategorySchema, LIMITS } from '@kioku/core/store';
import { z } from 'zod';

export const SEARCH_MEMORY_TOOL = 'search_memory';

/** Results of each kind `search_memory` returns by default, and at most. */
export const SEARCH_DEFAULT_LIMIT = 5;
export const SEARCH_MAX_LIMIT = 20;

/** Run a Kioku tool's own handler on arguments its own schema accepts (limits and defaults included). */
async function runTool(tool: Tool, args: Record<string, unknown>, context: ToolContext): Promise<unknown> {
  return tool.execute(tool.parameters.parse(args), context);
}

/**
 * `search_memory(query, limit?, category?, tags?)`: one search over both layers of memory —
 * the detail store (through `search_memory_details`) and the user's facts (through fact recall's
 * fact search), each tool's own handler with its own limits. A category or tags filter applies to facts
 * only, so details are left out when one is given.
 */
export function searchMemoryTool(searchDetails: Tool, searchFacts: Tool): Tool {
  return defineTool({
    name: SEARCH_MEMORY_TOOL,
    description:
      'Search memory by keywords: stored details (content kept with store_memory or offloaded tool outputs; ' +
      'read one in full with retrieve_memory) and remembered facts about the user. Returns the best ' +
      'matches of each kind.',
    parameters: z.object({
      query: z.string().trim().min(1).max(LIMITS.queryChars).describe('Keywords to look for.'),
      limit: z
        .number()
        .int()
        .min(1)
        .max(SEARCH_MAX_LIMIT)
        .optional()
        .describe(`At most this many details and this many facts (default ${SEARCH_DEFAULT_LIMIT}).`),
      category: CategorySchema.optional().describe(
        'Only facts in this category or below it, e.g. "user-preferences"; details are then left out.',
      ),
      tags: z
        .array(z.string())
        .optional()
        .describe('Only facts with every one of these tags; details are then left out.'),
    }),
    async execute({ query, limit = SEARCH_DEFAULT_LIMIT, category, tags }, context) {
      const factsOnly = category !== undefined || tags !== undefined;
      const [details, facts] = await Promise.all([
        factsOnly
          ? { results: [] }
          : (runTool(searchDetails, { query, limit }, context) as Promise<{ results: unknown[] }>),
        runTool(
          searchFacts,
          {
            query,
            ...(category === undefined ? {} : { category }),
            ...(tags === undefined ? {} : { tags }),
          },
          context,
        ) as Promise<unknown[]>,
      ]);
      return { details: details.results, facts: facts.slice(0, limit) };
    },
  });
}
