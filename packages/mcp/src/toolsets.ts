import {
  type ChatModel,
  factMemory,
  type KiokuStores,
  type MemoryFeature,
  planMode,
  type Tool,
  toolOutputOffload,
  ValidationError,
  workingMemory,
} from '@kioku/core';
import type { BackgroundQueue } from '@kioku/core/passes';
import { GET_PLAN_TOOL, getPlanTool } from './tools/get-plan.js';
import { SEARCH_MAX_LIMIT, SEARCH_MEMORY_TOOL, searchMemoryTool } from './tools/search-memory.js';
import { storeMemoryTool } from './tools/store-memory.js';

/**
 * The groups of tools a server offers (`--tools`): `details` is store / retrieve / search over the detail store; the
 * others are the fact, plan and working-memory toolkits a conversation offers, with the same schemas,
 * limits and errors.
 */
export const TOOLSETS = ['details', 'facts', 'plans', 'working'] as const;
export type Toolset = (typeof TOOLSETS)[number];

export const DEFAULT_TOOLSETS: readonly Toolset[] = ['details'];

/** `details,facts` → the toolsets, in TOOLSETS order; a ValidationError names an unknown one. */
export function parseToolsets(text: string): Toolset[] {
  const names = text
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const unknown = names.filter((name) => !(TOOLSETS as readonly string[]).includes(name));
  if (unknown.length > 0 || names.length === 0) {
    throw new ValidationError(
      `${unknown.length > 0 ? `Unknown toolset "${unknown[0]}"` : 'No toolset given'}; choose from ${TOOLSETS.join(', ')}.`,
    );
  }
  return TOOLSETS.filter((set) => names.includes(set));
}

function toolOf(feature: MemoryFeature, name: string): Tool {
  const tool = feature.toolkit?.tools.find((t) => t.name === name);
  if (!tool) throw new Error(`${feature.name} has no tool ${name}`);
  return tool;
}

/** The tools each toolset adds, by name (each name once). */
export const TOOLSET_TOOLS: Readonly<Record<Toolset, readonly string[]>> = Object.freeze({
  details: ['store_memory', 'retrieve_memory', SEARCH_MEMORY_TOOL],
  facts: ['save_memory', 'update_memory', 'delete_memory', 'list_memory_categories', SEARCH_MEMORY_TOOL],
  plans: [
    GET_PLAN_TOOL,
    'create_plan',
    'update_plan_step',
    'add_plan_step',
    'add_context_note',
    'complete_plan',
  ],
  working: [
    'save_to_working_memory',
    'get_from_working_memory',
    'list_working_memory',
    'search_working_memory',
  ],
});

export interface MemoryToolsOptions {
  /**
   * Enrich each memory `save_memory` saved, after the reply: `model` expands it into focused entries on
   * the `background` queue. `save_memory` answers as soon as the user's words are stored, whatever the
   * model does; without it, saved memories stay as saved.
   */
  enrichment?: { model: ChatModel; background: BackgroundQueue };
}

/**
 * Kioku's tools over a stores bundle, for the given toolsets, by name. Built once per server: the tools
 * hold no scope; each call gets its scope from the connection (the `ToolContext`), never from arguments.
 * The fact tools are fact recall's (`save_memory`, `delete_memory`, `list_memory_categories`) and the
 * `all` mode's `update_memory`; `search_memory` searches details and facts together.
 */
export function memoryTools(
  stores: KiokuStores,
  toolsets: readonly Toolset[] = DEFAULT_TOOLSETS,
  options: MemoryToolsOptions = {},
) {
  const offload = toolOutputOffload({ details: stores.details });
  const recall = factMemory({
    mode: 'recall',
    facts: stores.facts,
    sessions: stores.sessions,
    maxResults: SEARCH_MAX_LIMIT,
    ...(options.enrichment ? { enrichment: options.enrichment } : {}),
  });
  const all = factMemory({ facts: stores.facts });
  const plans = planMode({ store: stores.plans });
  const working = workingMemory({ store: stores.working });

  const available: Record<string, () => Tool> = {
    store_memory: () => storeMemoryTool(stores.details),
    retrieve_memory: () => toolOf(offload, 'retrieve_memory'),
    [SEARCH_MEMORY_TOOL]: () =>
      searchMemoryTool(toolOf(offload, 'search_memory_details'), toolOf(recall, 'search_memory')),
    save_memory: () => toolOf(recall, 'save_memory'),
    update_memory: () => toolOf(all, 'update_memory'),
    delete_memory: () => toolOf(recall, 'delete_memory'),
    list_memory_categories: () => toolOf(recall, 'list_memory_categories'),
    [GET_PLAN_TOOL]: () => getPlanTool(stores.plans),
  };
  for (const feature of [plans, working]) {
    for (const tool of feature.toolkit?.tools ?? []) available[tool.name] = () => tool;
  }

  const tools = new Map<string, Tool>();
  for (const set of toolsets) {
    for (const name of TOOLSET_TOOLS[set]) {
      const make = available[name];
      if (!make) throw new Error(`No tool ${name}`);
      if (!tools.has(name)) tools.set(name, make());
    }
  }
  return tools as ReadonlyMap<string, Tool>;
}
