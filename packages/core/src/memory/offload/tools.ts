import { z } from 'zod';
import { NotFoundError } from '../../foundation/errors.js';
import { defineTool, type Toolkit } from '../../model/tool.js';
import type { DetailRecord } from '../../store/details/record.js';
import type { DetailStore } from '../../store/details/store.js';
import { defuse, detailSource } from '../trust/fence.js';
import { formatMemoryRef, parseMemoryRef } from './ref.js';

export const MEMORY_DETAIL_START = '[MEMORY_DETAIL';
export const MEMORY_DETAIL_END = '[END_MEMORY_DETAIL]';

/** A detail's full content as retrieve_memory returns it: between markers naming its id and source. */
export function fenceDetail(detail: DetailRecord): string {
  return `${MEMORY_DETAIL_START} ${detail.id} from ${detailSource(detail)}]\n${defuse(detail.content)}\n${MEMORY_DETAIL_END}`;
}

export const RETRIEVE_MEMORY_TOOL = 'retrieve_memory';
/**
 * Not `search_memory`: that name belongs to fact recall (a tool over facts). This one
 * searches the detail store, i.e. offloaded outputs.
 */
export const SEARCH_MEMORY_DETAILS_TOOL = 'search_memory_details';

export function offloadToolkit(details: DetailStore): Toolkit {
  const retrieve = defineTool({
    name: RETRIEVE_MEMORY_TOOL,
    recall: true,
    description: 'Read the content behind a [MemoryRef: <id> …].',
    parameters: z.object({ id: z.string().trim().min(1).max(300) }),
    async execute(args, { scope }) {
      // Models sometimes pass the whole placeholder; take the id out of it.
      const id = parseMemoryRef(args.id)?.id ?? args.id;
      const detail = await details.get(scope, id);
      if (!detail) throw new NotFoundError(`No stored memory with id "${id}".`);
      return fenceDetail(detail);
    },
  });
  const search = defineTool({
    name: SEARCH_MEMORY_DETAILS_TOOL,
    recall: true,
    description: 'Search offloaded tool outputs; returns MemoryRefs.',
    parameters: z.object({
      query: z.string().trim().min(1).max(4_000),
      limit: z.number().int().min(1).max(20).optional(),
    }),
    async execute(args, { scope }) {
      const hits = await details.search(scope, { query: args.query, limit: args.limit ?? 5 });
      return {
        results: hits.map(({ detail }) => ({
          ref: formatMemoryRef({ id: detail.id, description: detail.description, tokens: detail.tokenCount }),
          id: detail.id,
          type: detail.type,
          source: detailSource(detail),
          summary: detail.summary ?? null,
          createdAt: detail.createdAt,
        })),
      };
    },
  });
  return { name: 'tool-output-offload', tools: [retrieve, search] };
}
