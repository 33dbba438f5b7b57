import { z } from 'zod';
import { ValidationError } from '../../foundation/errors.js';
import { parseOrThrow } from '../../foundation/validation.js';
import type { ChatModel } from '../../model/chat-model.js';
import type { MemoryFeature } from '../../runtime/feature.js';
import type { DetailStore } from '../../store/details/store.js';
import { defaultTokenizer, type Tokenizer } from '../../tokens/tokenizer.js';
import { offloadProcessor, type Summarize } from './processor.js';
import { modelSummarizer } from './summarizer.js';
import { offloadToolkit, RETRIEVE_MEMORY_TOOL, SEARCH_MEMORY_DETAILS_TOOL } from './tools.js';

export const OFFLOAD_DEFAULTS = Object.freeze({
  /** Outputs over this many tokens are offloaded. */
  thresholdTokens: 500,
  /** Tokens of the summary kept beside the placeholder. */
  summaryTokens: 100,
  /** How long a summarizer may take before the extractive summary is used. */
  summaryTimeoutMs: 5_000,
});

const OffloadOptionsSchema = z.object({
  thresholdTokens: z.number().int().min(1).default(OFFLOAD_DEFAULTS.thresholdTokens),
  summaryTokens: z.number().int().min(1).max(2_000).default(OFFLOAD_DEFAULTS.summaryTokens),
  summaryTimeoutMs: z.number().int().min(1).max(600_000).default(OFFLOAD_DEFAULTS.summaryTimeoutMs),
});

export interface ToolOutputOffloadOptions {
  /** Layer 2: where full outputs are kept, per user. */
  details: DetailStore;
  /** Outputs over this many tokens are offloaded (default 500). */
  thresholdTokens?: number;
  /** Summary size in tokens (default 100). */
  summaryTokens?: number;
  /**
   * A summary function instead of the extractive one (first lines, JSON shape). If it throws, returns
   * nothing or exceeds `summaryTimeoutMs`, the extractive summary is used; the tool call never fails
   * because of it. See `modelSummarizer`.
   */
  summarize?: Summarize;
  /** Shorthand for `summarize: modelSummarizer({ model: summaryModel })`: a cheaper model writes the summaries. */
  summaryModel?: ChatModel;
  /** How long a summary may take, in ms (default 5000); then the extractive summary is used. */
  summaryTimeoutMs?: number;
  /** Counts the threshold and the placeholder's token figure (default o200k_base). */
  tokenizer?: Tokenizer;
}

/**
 * Two-layer memory: large tool outputs leave the conversation for the detail store and come
 * back on demand. Tools: `retrieve_memory(id)` and `search_memory_details(query, limit?)`.
 */
export function toolOutputOffload(options: ToolOutputOffloadOptions): MemoryFeature {
  const { thresholdTokens, summaryTokens, summaryTimeoutMs } = parseOrThrow(
    OffloadOptionsSchema,
    {
      thresholdTokens: options.thresholdTokens,
      summaryTokens: options.summaryTokens,
      summaryTimeoutMs: options.summaryTimeoutMs,
    },
    'tool output offload options',
  );
  if (options.summarize && options.summaryModel) {
    throw new ValidationError('Give either `summarize` or `summaryModel`, not both.');
  }
  const summarize =
    options.summarize ??
    (options.summaryModel ? modelSummarizer({ model: options.summaryModel }) : undefined);
  return {
    name: 'tool-output-offload',
    toolkit: offloadToolkit(options.details),
    toolOutput: offloadProcessor({
      details: options.details,
      thresholdTokens,
      summaryTokens,
      tokenizer: options.tokenizer ?? defaultTokenizer,
      summarize,
      summaryTimeoutMs,
      // Re-offloading what retrieve_memory just fetched would loop; search results are small summaries.
      exempt: new Set([RETRIEVE_MEMORY_TOOL, SEARCH_MEMORY_DETAILS_TOOL]),
    }),
  };
}
