import { z } from 'zod';
import { defineTool, type Tool } from '../../model/tool.js';
import type { FactStore } from '../../store/facts/store.js';
import { deleteSeenFact } from './seen-fact-edits.js';

const byStore = new WeakMap<FactStore, Tool>();

/**
 * `delete_memory(id)`, offered by the fact feature's `all` and `recall` modes over
 * the same fact store. Built once per store, so both features hand the Conversation the same Tool
 * object and it is registered once; two features over different stores would be ambiguous and the
 * Conversation refuses them.
 */
export function deleteMemoryTool(store: FactStore): Tool {
  let tool = byStore.get(store);
  if (!tool) {
    tool = defineTool({
      name: 'delete_memory',
      description: 'Delete a wrong, outdated or unwanted memory by [id].',
      parameters: z.object({ id: z.string().min(1) }),
      async execute({ id }, context) {
        await deleteSeenFact(store, context, id, 'delete_memory');
        return `Deleted memory ${id}.`;
      },
    });
    byStore.set(store, tool);
  }
  return tool;
}
