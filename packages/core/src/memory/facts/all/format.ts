import type { LineFrame } from '../../../runtime/fit-lines.js';
import type { Fact } from '../../../store/facts/record.js';
import { quoteContent, sourceLabel } from '../../trust/fence.js';

export const FACT_BLOCK_START = '[DYNAMIC_MEMORY]';
export const FACT_BLOCK_END = '[END_DYNAMIC_MEMORY]';

/**
 * One fact line, with its source: `- (user) {title}: {content}`, or without a title
 * `- (user) {content}`. With `showIds` the id comes first in brackets (`- [a1b2c3d4e5f6] (user) Diet:
 * vegetarian`), which lets the model call update_memory / delete_memory on a fact it did
 * not create itself. Title and content are quoted (`quoteContent`): they cannot forge a line or a marker.
 */
export function factLine(
  fact: Pick<Fact, 'id' | 'title' | 'content' | 'provenance'>,
  showIds: boolean,
): string {
  const head = `- ${showIds ? `[${fact.id}] ` : ''}(${sourceLabel(fact.provenance)}) `;
  const text = fact.title === undefined ? fact.content : `${fact.title}: ${fact.content}`;
  return head + quoteContent(text);
}

/** {@link renderFactBlock}'s shape, for LineFitter: the start marker's line, the lines, the end marker. */
export const FACT_BLOCK_FRAME: Readonly<LineFrame> = Object.freeze({
  head: `${FACT_BLOCK_START}\n`,
  tail: FACT_BLOCK_END,
});

/** The `[DYNAMIC_MEMORY]` block around the fact lines (see FACT_BLOCK_FRAME). */
export function renderFactBlock(lines: readonly string[]): string {
  return [FACT_BLOCK_START, ...lines, FACT_BLOCK_END].join('\n');
}
