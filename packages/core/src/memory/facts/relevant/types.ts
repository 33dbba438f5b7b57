/** The memory types. A fact's type is the first segment of its category when it is one of these. */
export const MEMORY_TYPES = Object.freeze([
  'episodic',
  'semantic',
  'procedural',
  'entity',
  'relationship',
  'declarative',
  'custom',
] as const);

export type FactMemoryType = (typeof MEMORY_TYPES)[number];

const FACT_TYPES: ReadonlySet<string> = new Set(MEMORY_TYPES);

export function isFactMemoryType(type: string): type is FactMemoryType {
  return FACT_TYPES.has(type);
}

/** `episodic/interactions` → `episodic`; categories outside the memory types (`general`, `user-preferences/…`) are semantic. */
export function factMemoryType(category: string): FactMemoryType {
  const head = category.split('/')[0]!;
  return isFactMemoryType(head) ? head : 'semantic';
}

/** One retrieved memory. */
export interface MemorySearchResult {
  id: string;
  source: 'fact' | 'detail';
  /** Who wrote it, in a few tokens (`user`, `assistant`, `tool:fetch`, …; see `sourceLabel`). */
  from: string;
  /** For facts see {@link factMemoryType}; for details their detail type, e.g. `tool_output`. */
  type: string;
  /** The fact's content, or a detail's `[MemoryRef: …]` placeholder and summary (never its full content). */
  content: string;
  /** The raw lexical score; comparable only within one source's results. */
  score: number;
  /** Normalized to [0, 1]; see `relevance()`. */
  relevance: number;
  createdAt: string;
}

/** Every candidate of a retrieval, sorted by relevance, and why those not selected were left out. */
export interface RankedMemories {
  selected: MemorySearchResult[];
  belowThreshold: MemorySearchResult[];
  overLimit: MemorySearchResult[];
}
