import type { MemorySearchResult } from './types.js';

/** Agentflow's `_format_memories` header. */
export const MEMORIES_HEADER = 'Relevant memories from past interactions:';

/** `1. [episodic] User: …` — Agentflow's numbered format. */
export function formatMemoryLine(position: number, memory: MemorySearchResult): string {
  return `${position}. [${memory.type}] ${memory.content}`;
}

/** The whole block, or an empty string when there is nothing to show. */
export function formatMemories(memories: readonly MemorySearchResult[]): string {
  if (memories.length === 0) return '';
  return [MEMORIES_HEADER, ...memories.map((m, i) => formatMemoryLine(i + 1, m))].join('\n');
}
