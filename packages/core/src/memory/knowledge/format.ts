import type { DocumentChunkHit } from '../../store/documents/record.js';
import { defuse } from '../trust/fence.js';

export const STATIC_KNOWLEDGE_START = '[STATIC_KNOWLEDGE]';
export const STATIC_KNOWLEDGE_END = '[END_STATIC_KNOWLEDGE]';

/**
 * The static-knowledge block, in the style of `[DYNAMIC_MEMORY]` … `[END_DYNAMIC_MEMORY]`:
 * the markers on their own lines around the body, so the model can tell reference material from
 * instructions and the other memory blocks.
 */
export function renderStaticKnowledge(body: string): string {
  return `${STATIC_KNOWLEDGE_START}\n${body}\n${STATIC_KNOWLEDGE_END}`;
}

/** One retrieved chunk: `## {document title} (part {n})`, then the chunk's text. */
export function chunkSection(hit: Pick<DocumentChunkHit, 'title' | 'chunk'>): string {
  return `## ${hit.title} (part ${hit.chunk.index + 1})\n${defuse(hit.chunk.text)}`;
}
