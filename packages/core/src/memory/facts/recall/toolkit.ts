import { z } from 'zod';
import { LIMITS } from '../../../foundation/limits.js';
import { CategorySchema } from '../../../foundation/record-fields.js';
import type { Scope } from '../../../foundation/scope.js';
import { defineTool, type Toolkit } from '../../../model/tool.js';
import type { DedupSettings } from '../../../store/facts/near-duplicate.js';
import type { Fact } from '../../../store/facts/record.js';
import type { FactStore } from '../../../store/facts/store.js';
import { sourceLabel } from '../../trust/fence.js';
import { isQuarantined } from '../../trust/quarantine.js';
import { createWithDedup, quarantineNotice } from '../dedup-write.js';
import { deleteMemoryTool } from '../delete-memory.js';
import { assistantProvenance } from '../provenance.js';
import { renderCategoryTree } from './format.js';

const ANTI_PATTERN_HINT = 'A lesson what not to do: category "anti-patterns/<domain>".';

export interface FactRecallToolsOptions {
  searchResults: number;
  /** Dedup before save_memory stores; null saves every text. */
  dedup: DedupSettings | null;
  /**
   * Called with each memory save_memory created (not for a skip or an update), e.g. to request its
   * enrichment; save_memory answers once it resolves.
   */
  onSaved?: (scope: Scope, fact: Fact) => Promise<void>;
}

/**
 * Fact recall's tools over the user's facts: save_memory, search_memory, delete_memory (the same
 * Tool object mode `all` offers) and list_memory_categories. save_memory saves at once; its result
 * says whether it created, skipped (a memory already says it) or updated a memory, with the id.
 */
export function factRecallTools(store: FactStore, options: FactRecallToolsOptions): Toolkit {
  const saveMemory = defineTool({
    name: 'save_memory',
    description: `Save a durable memory. ${ANTI_PATTERN_HINT}`,
    parameters: z.object({
      content: z.string().trim().min(1),
      category: CategorySchema.optional().describe('e.g. "user-preferences/timezone"'),
      tags: z.array(z.string()).optional(),
    }),
    // The content is saved as given, at once; the feature may then expand it in the background.
    async execute({ content, category, tags }, context) {
      const { scope } = context;
      const { decision, fact } = await createWithDedup(
        store,
        context,
        {
          content,
          ...(category === undefined ? {} : { category }),
          ...(tags === undefined ? {} : { tags }),
          provenance: assistantProvenance(scope, 'save_memory'),
        },
        options.dedup,
      );
      if (decision === 'skipped') {
        return `Skipped: memory ${fact.id} already says this (${JSON.stringify(fact.content)}); nothing was saved.`;
      }
      if (decision === 'updated') {
        return `Updated memory ${fact.id} (${fact.category}): it said part of this and now says all of it, instead of a near-duplicate.`;
      }
      // A quarantined memory is not enriched: enrichment is a model pass over its text.
      if (isQuarantined(fact)) return `Saved memory ${fact.id} (${fact.category}).${quarantineNotice(fact)}`;
      await options.onSaved?.(scope, fact);
      return `Saved memory ${fact.id} (${fact.category}).`;
    },
  });

  const searchMemory = defineTool({
    name: 'search_memory',
    recall: true,
    description: 'Search long-term memory by keywords.',
    parameters: z.object({
      query: z.string().trim().min(1).max(LIMITS.queryChars),
      category: CategorySchema.optional().describe('A prefix'),
      tags: z.array(z.string()).optional(),
    }),
    async execute({ query, category, tags }, { scope, seen }) {
      const hits = (
        await store.search(scope, {
          query,
          limit: options.searchResults,
          ...(category === undefined ? {} : { category }),
          ...(tags === undefined ? {} : { tags }),
        })
      ).filter(({ fact }) => !isQuarantined(fact));
      for (const { fact } of hits) seen?.note(fact);
      return hits.map(({ fact, score }) => ({
        id: fact.id,
        category: fact.category,
        tags: fact.tags,
        content: fact.content,
        source: sourceLabel(fact.provenance),
        score: Math.round(score * 1000) / 1000,
      }));
    },
  });

  const listCategories = defineTool({
    name: 'list_memory_categories',
    description: 'Memory categories with entry counts.',
    parameters: z.object({}),
    async execute(_args, { scope }) {
      const counts = await store.categories(scope);
      return counts.length === 0 ? 'No memories saved yet.' : renderCategoryTree(counts);
    },
  });

  return {
    name: 'fact-recall',
    tools: [saveMemory, searchMemory, deleteMemoryTool(store), listCategories],
  };
}
