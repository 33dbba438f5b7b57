export { OFFLOAD_DEFAULTS, type ToolOutputOffloadOptions, toolOutputOffload } from './feature.js';
export type { Summarize, SummarizeContext } from './processor.js';
export { formatMemoryRef, type MemoryRef, parseMemoryRef } from './ref.js';
export { extractiveSummary } from './summary.js';
export { RETRIEVE_MEMORY_TOOL, SEARCH_MEMORY_DETAILS_TOOL } from './tools.js';
