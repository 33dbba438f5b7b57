import { z } from 'zod';
import type { FactStore } from '../../facts/store.js';
import { withFactEmbeddings } from '../../hybrid/facts.js';
import type { HybridOptions } from '../../hybrid/vector-side.js';
import type { SessionStore } from '../../sessions/store.js';
import type { MemoryFeature } from '../../turn/feature.js';
import { parseOrThrow } from '../../validation.js';
import { LONG_TERM_MEMORY_MIDDLEWARE, longTermMemoryMiddleware } from './middleware.js';
import { longTermMemoryToolkit } from './toolkit.js';

export { RECALL_HEADER, recallLine, renderCategoryTree } from './format.js';
export { RECALL_INJECTED_KEY } from './injected.js';
export { LONG_TERM_MEMORY_MIDDLEWARE } from './middleware.js';

export interface LongTermMemoryOptions {
  /** The user's facts (shared with dynamic memory when both are used). */
  store: FactStore;
  /** Where the ids recalled in each session are kept (k-v key `kioku.recall.injected`). */
  sessions: SessionStore;
  /** Entries searched per user message, and the most search_memory returns (default 8, RockBot's). */
  maxResults?: number;
  /** Newest entries injected on a session's first turn when the search finds nothing (default 5; 0 = off). */
  fallbackResults?: number;
  /** Most tokens for the block; by default whatever the budget has left. */
  maxTokens?: number;
  /**
   * Hybrid recall: with an `embedder`, the recall and `search_memory` fuse lexical and vector results
   * (reciprocal rank fusion), and facts saved, updated or deleted through this feature's tools keep their
   * vectors in `index` (default: an in-memory index). Without it (the default) recall is lexical.
   * Facts written elsewhere get vectors when written through `withFactEmbeddings` with the same index
   * and embedder, or from `reembed()`.
   */
  embeddings?: HybridOptions;
}

const OptionsSchema = z.object({
  maxResults: z.number().int().min(1).max(1000).default(8),
  fallbackResults: z.number().int().min(0).max(1000).default(5),
  maxTokens: z.number().int().min(1).optional(),
});

/**
 * RockBot's long-term memory (`.WithMemory()`): facts recalled by the user message on each turn with
 * delta injection and a first-turn fallback, plus save_memory, search_memory, delete_memory and
 * list_memory_categories.
 */
export function longTermMemory(options: LongTermMemoryOptions): MemoryFeature {
  const { maxResults, fallbackResults, maxTokens } = parseOrThrow(
    OptionsSchema,
    options,
    'long-term memory options',
  );
  const store = options.embeddings ? withFactEmbeddings(options.store, options.embeddings) : options.store;
  return {
    name: LONG_TERM_MEMORY_MIDDLEWARE,
    middleware: longTermMemoryMiddleware({
      store,
      sessions: options.sessions,
      maxResults,
      fallbackResults,
      ...(maxTokens === undefined ? {} : { maxTokens }),
    }),
    toolkit: longTermMemoryToolkit(store, { searchResults: maxResults }),
  };
}
