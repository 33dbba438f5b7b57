import type { LineFrame } from '../../../runtime/fit-lines.js';
import type { CategoryCount, Fact } from '../../../store/facts/record.js';
import { quoteContent, sourceLabel } from '../../trust/fence.js';

export const RECALL_HEADER = '[RECALLED_MEMORY] (long-term memory relevant to this message)';
export const RECALL_END = '[END_RECALLED_MEMORY]';

/** A recall line with the fact's source: `- [id] (category, source): content`, content quoted. */
export function recallLine(fact: Pick<Fact, 'id' | 'category' | 'content' | 'provenance'>): string {
  return `- [${fact.id}] (${fact.category}, ${sourceLabel(fact.provenance)}): ${quoteContent(fact.content)}`;
}

/** {@link renderRecall}'s shape, for LineFitter: the header's line, the lines, the end marker. */
export const RECALL_FRAME: Readonly<LineFrame> = Object.freeze({
  head: `${RECALL_HEADER}\n`,
  tail: RECALL_END,
});

/** The header, the recall lines and the end marker, one per line. */
export function renderRecall(lines: readonly string[]): string {
  return [RECALL_HEADER, ...lines, RECALL_END].join('\n');
}

/**
 * The category hierarchy for list_memory_categories: every category and each of its parents, sorted,
 * indented by depth, with the number of entries at or below it:
 *
 * ```
 * anti-patterns (2)
 *   anti-patterns/email (1)
 *   anti-patterns/file-operations (1)
 * general (3)
 * ```
 */
export function renderCategoryTree(counts: readonly CategoryCount[]): string {
  const totals = new Map<string, number>();
  for (const { category, count } of counts) {
    const segments = category.split('/');
    for (let depth = 1; depth <= segments.length; depth++) {
      const path = segments.slice(0, depth).join('/');
      totals.set(path, (totals.get(path) ?? 0) + count);
    }
  }
  // Sort by segments so `a/b` stays under `a` even when another category starts with `a-`.
  const bySegments = (a: string, b: string) => {
    const x = a.split('/');
    const y = b.split('/');
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
      const order = x[i]!.localeCompare(y[i]!);
      if (order !== 0) return order;
    }
    return x.length - y.length;
  };
  return [...totals.keys()]
    .sort(bySegments)
    .map((path) => `${'  '.repeat(path.split('/').length - 1)}${path} (${totals.get(path)})`)
    .join('\n');
}
