import { z } from 'zod';
import { parseOrThrow } from '../../../foundation/validation.js';
import type { MemoryFeature } from '../../../runtime/feature.js';
import { type DedupOption, DedupOptionSchema, resolveDedup } from '../../../store/facts/near-duplicate.js';
import type { FactStore } from '../../../store/facts/store.js';
import { DYNAMIC_MEMORY_MIDDLEWARE, dynamicMemoryMiddleware } from './middleware.js';
import { dynamicMemoryToolkit } from './toolkit.js';

export { DYNAMIC_MEMORY_END, DYNAMIC_MEMORY_START } from './format.js';
export { DYNAMIC_MEMORY_MIDDLEWARE, UNREAD_FACTS } from './middleware.js';

export interface DynamicMemoryOptions {
  /** Where the user's facts live; read and written in the turn's scope (user + agent). */
  store: FactStore;
  /**
   * Most tokens for the block. The budget's `dynamic-memory` share (4000 by default, HPD's figure)
   * applies too; the smaller one wins.
   */
  maxTokens?: number;
  /**
   * Print each fact's id (`- [id] title: content`) so the model can update or delete facts it did not
   * create this session (default true). `false` gives HPD-Agent's bare `- title: content` lines.
   */
  showIds?: boolean;
  /** Offer create_memory / update_memory / delete_memory (default true). */
  tools?: boolean;
  /**
   * Dedup before create_memory stores (default on, threshold `DEDUP_THRESHOLD`): `{ threshold }` tunes
   * it, `false` turns it off.
   */
  dedup?: DedupOption;
}

const OptionsSchema = z.object({
  maxTokens: z.number().int().min(1).optional(),
  showIds: z.boolean().default(true),
  tools: z.boolean().default(true),
  dedup: DedupOptionSchema,
});

/**
 * HPD-Agent's DynamicMemory (`.WithDynamicMemory()`): the user's facts injected as a `[DYNAMIC_MEMORY]`
 * system message every turn, plus tools for the model to create, update and delete them.
 */
export function dynamicMemory(options: DynamicMemoryOptions): MemoryFeature {
  const { maxTokens, showIds, tools, dedup } = parseOrThrow(OptionsSchema, options, 'dynamic memory options');
  const middleware = dynamicMemoryMiddleware({
    store: options.store,
    showIds,
    ...(maxTokens === undefined ? {} : { maxTokens }),
  });
  return {
    name: DYNAMIC_MEMORY_MIDDLEWARE,
    middleware,
    ...(tools ? { toolkit: dynamicMemoryToolkit(options.store, { dedup: resolveDedup(dedup) }) } : {}),
  };
}
