export { relevance as memoryRelevance } from '../../../search/relevance.js';
export { memoryManager } from './feature.js';
export { formatMemories, MEMORIES_END, MEMORIES_HEADER } from './format.js';
export {
  MEMORY_MANAGER_DEFAULTS,
  MemoryManager,
  type MemoryManagerOptions,
  type RetrieveOptions,
} from './manager.js';
export {
  AGENTFLOW_MEMORY_TYPES,
  type FactMemoryType,
  factMemoryType,
  type MemorySearchResult,
  type RankedMemories,
} from './types.js';
