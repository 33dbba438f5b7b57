import { z } from 'zod';
import { parseOrThrow } from '../../../foundation/validation.js';
import type { MemoryFeature } from '../../../runtime/feature.js';
import { type DedupOption, DedupOptionSchema, resolveDedup } from '../../../store/facts/near-duplicate.js';
import type { FactStore } from '../../../store/facts/store.js';
import { allFactsMiddleware, FACTS_MIDDLEWARE } from './middleware.js';
import { factEditTools } from './toolkit.js';

export interface AllFactsOptions {
  /** Where the user's facts live; read and written in the turn's scope (user + agent). */
  store: FactStore;
  /**
   * Most tokens for the block. The budget's `facts` share (4000 by default)
   * applies too; the smaller one wins.
   */
  maxTokens?: number;
  /**
   * Print each fact's id (`- [id] title: content`) so the model can update or delete facts it did not
   * create this session (default true). `false` gives bare `- title: content` lines.
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
 * Every fact (`withFacts()`, mode `all`): the user's facts injected as a `[DYNAMIC_MEMORY]`
 * system message every turn, plus tools for the model to create, update and delete them.
 */
export function allFacts(options: AllFactsOptions): MemoryFeature {
  const { maxTokens, showIds, tools, dedup } = parseOrThrow(
    OptionsSchema,
    options,
    "factMemory({ mode: 'all' }) options",
  );
  const middleware = allFactsMiddleware({
    store: options.store,
    showIds,
    ...(maxTokens === undefined ? {} : { maxTokens }),
  });
  return {
    name: FACTS_MIDDLEWARE,
    middleware,
    ...(tools ? { toolkit: factEditTools(options.store, { dedup: resolveDedup(dedup) }) } : {}),
  };
}
