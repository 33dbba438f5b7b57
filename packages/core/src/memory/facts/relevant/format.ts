import type { LineFrame } from '../../../runtime/fit-lines.js';
import { quoteContent } from '../../trust/fence.js';
import type { MemorySearchResult } from './types.js';

/** The relevant-memory block's header, as a fenced block. */
export const MEMORIES_HEADER = '[RELEVANT_MEMORIES] (from past interactions)';
export const MEMORIES_END = '[END_RELEVANT_MEMORIES]';

/** `1. [episodic, assistant] User: …` — numbered, with the source; content quoted. */
export function formatMemoryLine(position: number, memory: MemorySearchResult): string {
  return `${position}. [${memory.type}, ${memory.from}] ${quoteContent(memory.content)}`;
}

/** {@link renderMemories}'s shape, for LineFitter: the header's line, the lines, the end marker. */
export const MEMORIES_FRAME: Readonly<LineFrame> = Object.freeze({
  head: `${MEMORIES_HEADER}\n`,
  tail: MEMORIES_END,
});

/** The header, the numbered lines and the end marker, one per line. */
export function renderMemories(lines: readonly string[]): string {
  return [MEMORIES_HEADER, ...lines, MEMORIES_END].join('\n');
}

/** The whole block, or an empty string when there is nothing to show. */
export function formatMemories(memories: readonly MemorySearchResult[]): string {
  if (memories.length === 0) return '';
  return renderMemories(memories.map((m, i) => formatMemoryLine(i + 1, m)));
}
