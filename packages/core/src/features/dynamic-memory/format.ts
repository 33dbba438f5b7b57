import type { Fact } from '../../facts/record.js';

export const DYNAMIC_MEMORY_START = '[DYNAMIC_MEMORY]';
export const DYNAMIC_MEMORY_END = '[END_DYNAMIC_MEMORY]';

/**
 * One fact as HPD-Agent prints it: `- {title}: {content}`, or `- {content}` without a title. With
 * `showIds` the id comes first in brackets (`- [a1b2c3d4e5f6] Diet: vegetarian`, RockBot's style), which
 * is what lets the model call update_memory / delete_memory on a fact it did not create itself.
 */
export function factLine(fact: Pick<Fact, 'id' | 'title' | 'content'>, showIds: boolean): string {
  const id = showIds ? `[${fact.id}] ` : '';
  return fact.title === undefined ? `- ${id}${fact.content}` : `- ${id}${fact.title}: ${fact.content}`;
}

/** The `[DYNAMIC_MEMORY]` block around the fact lines. */
export function renderDynamicMemory(lines: readonly string[]): string {
  return [DYNAMIC_MEMORY_START, ...lines, DYNAMIC_MEMORY_END].join('\n');
}
