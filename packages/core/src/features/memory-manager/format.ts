import type { MemorySearchResult } from './types.js';

/** Agentflow's `_format_memories` header. */
export const MEMORIES_HEADER = 'Relevant memories from past interactions:';

/** `1. [episodic] User: …` — Agentflow's numbered format. */
export function formatMemoryLine(position: number, memory: MemorySearchResult): string {
  return `${position}. [${memory.type}] ${memory.content}`;
}

/** The header and the numbered lines, one per line. */
export function renderMemories(lines: readonly string[]): string {
  return [MEMORIES_HEADER, ...lines].join('\n');
}

/** The whole block, or an empty string when there is nothing to show. */
export function formatMemories(memories: readonly MemorySearchResult[]): string {
  if (memories.length === 0) return '';
  return renderMemories(memories.map((m, i) => formatMemoryLine(i + 1, m)));
}
