import { z } from 'zod';
import { CategorySchema } from '../../../foundation/record-fields.js';
import { defineTool, type Toolkit } from '../../../model/tool.js';
import { type DedupSettings, resolveDedup } from '../../../store/facts/near-duplicate.js';
import type { FactStore } from '../../../store/facts/store.js';
import { createWithDedup, quarantineNotice } from '../dedup-write.js';
import { deleteMemoryTool } from '../delete-memory.js';
import { assistantProvenance } from '../provenance.js';
import { updateSeenFact } from '../seen-fact-edits.js';

/**
 * The `all` mode's tools: create_memory, update_memory, delete_memory over the user's facts.
 * Handlers write in the turn's scope (the ToolContext's); unknown ids throw NotFoundError, which the
 * executor returns to the model as a `NOT_FOUND` tool error. create_memory dedups before it stores
 * (unless `dedup` is null): its result says whether it created, skipped or updated, with the fact's id.
 */
export function factEditTools(store: FactStore, options: { dedup?: DedupSettings | null } = {}): Toolkit {
  const dedup = options.dedup === undefined ? resolveDedup(undefined) : options.dedup;
  const createMemory = defineTool({
    name: 'create_memory',
    description: 'Remember a durable fact about the user.',
    parameters: z.object({
      title: z.string().trim().min(1),
      content: z.string().trim().min(1).describe('Short, self-contained.'),
      category: CategorySchema.optional(),
      tags: z.array(z.string()).optional(),
    }),
    async execute({ title, content, category, tags }, context) {
      const { decision, fact } = await createWithDedup(
        store,
        context,
        {
          title,
          content,
          ...(category === undefined ? {} : { category }),
          ...(tags === undefined ? {} : { tags }),
          provenance: assistantProvenance(context.scope, 'create_memory'),
        },
        dedup,
      );
      if (decision === 'skipped') {
        return `Skipped: memory ${fact.id} already says this (${JSON.stringify(fact.content)}); nothing was created.`;
      }
      if (decision === 'updated') {
        return `Updated memory ${fact.id}: it said part of this and now says all of it, instead of a near-duplicate.`;
      }
      return `Created memory ${fact.id}: ${title}${quarantineNotice(fact)}`;
    },
  });

  const updateMemory = defineTool({
    name: 'update_memory',
    description: 'Correct a memory by its [id]; omitted fields stay.',
    parameters: z
      .object({
        id: z.string().min(1),
        title: z.string().trim().min(1).optional(),
        content: z.string().trim().min(1).optional(),
      })
      .refine((a) => a.title !== undefined || a.content !== undefined, {
        message: 'give a title, content or both',
      }),
    async execute({ id, title, content }, context) {
      const patch = {
        ...(title === undefined ? {} : { title }),
        ...(content === undefined ? {} : { content }),
      };
      const fact = await updateSeenFact(store, context, id, patch, 'update_memory');
      return `Updated memory ${id}.${quarantineNotice(fact)}`;
    },
  });

  return { name: 'facts', tools: [createMemory, updateMemory, deleteMemoryTool(store)] };
}
