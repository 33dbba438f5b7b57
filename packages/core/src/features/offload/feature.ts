import { z } from 'zod';
import type { DetailStore } from '../../details/store.js';
import { defaultTokenizer, type Tokenizer } from '../../tokenizer.js';
import type { MemoryFeature } from '../../turn/feature.js';
import { parseOrThrow } from '../../validation.js';
import { offloadProcessor, type Summarize } from './processor.js';
import { offloadToolkit, RETRIEVE_MEMORY_TOOL, SEARCH_MEMORY_DETAILS_TOOL } from './tools.js';

export const OFFLOAD_DEFAULTS = Object.freeze({
  /** The PRD's example threshold. */
  thresholdTokens: 500,
  /** Tokens of the summary kept beside the placeholder. */
  summaryTokens: 100,
});

const OffloadOptionsSchema = z.object({
  thresholdTokens: z.number().int().min(1).default(OFFLOAD_DEFAULTS.thresholdTokens),
  summaryTokens: z.number().int().min(1).max(2_000).default(OFFLOAD_DEFAULTS.summaryTokens),
});

export interface ToolOutputOffloadOptions {
  /** Layer 2: where full outputs are kept, per user. */
  details: DetailStore;
  /** Outputs over this many tokens are offloaded (default 500). */
  thresholdTokens?: number;
  /** Summary size in tokens (default 100). */
  summaryTokens?: number;
  /**
   * A model summary instead of the extractive one (first lines, JSON shape). If it throws or returns
   * nothing, the extractive summary is used; the tool call never fails because of it.
   */
  summarize?: Summarize;
  /** Counts the threshold and the placeholder's token figure (default o200k_base). */
  tokenizer?: Tokenizer;
}

/**
 * Two-layer memory (the PRD): large tool outputs leave the conversation for the detail store and come
 * back on demand. Tools: `retrieve_memory(id)` and `search_memory_details(query, limit?)`.
 */
export function toolOutputOffload(options: ToolOutputOffloadOptions): MemoryFeature {
  const { thresholdTokens, summaryTokens } = parseOrThrow(
    OffloadOptionsSchema,
    { thresholdTokens: options.thresholdTokens, summaryTokens: options.summaryTokens },
    'tool output offload options',
  );
  return {
    name: 'tool-output-offload',
    toolkit: offloadToolkit(options.details),
    toolOutput: offloadProcessor({
      details: options.details,
      thresholdTokens,
      summaryTokens,
      tokenizer: options.tokenizer ?? defaultTokenizer,
      summarize: options.summarize,
      // Re-offloading what retrieve_memory just fetched would loop; search results are small summaries.
      exempt: new Set([RETRIEVE_MEMORY_TOOL, SEARCH_MEMORY_DETAILS_TOOL]),
    }),
  };
}
