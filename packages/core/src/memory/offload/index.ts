export {
  EXPANDED_REFS_END,
  EXPANDED_REFS_START,
  memoryRefExpansion,
  REF_EXPANSION_DEFAULTS,
  REF_EXPANSION_MIDDLEWARE,
  type RefExpansionOptions,
} from './expansion.js';
export { OFFLOAD_DEFAULTS, type ToolOutputOffloadOptions, toolOutputOffload } from './feature.js';
export type { Summarize, SummarizeContext } from './processor.js';
export { findMemoryRefs, formatMemoryRef, type MemoryRef, parseMemoryRef } from './ref.js';
export {
  MODEL_SUMMARY_DEFAULTS,
  type ModelSummarizerOptions,
  modelSummarizer,
  SUMMARY_INSTRUCTIONS,
} from './summarizer.js';
export { extractiveSummary } from './summary.js';
export { RETRIEVE_MEMORY_TOOL, SEARCH_MEMORY_DETAILS_TOOL } from './tools.js';
