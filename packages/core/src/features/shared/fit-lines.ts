import type { Tokenizer } from '../../tokenizer.js';
import { type ChatMessage, countMessageTokens } from '../../turn/messages.js';
import type { DroppedItem } from '../../turn/middleware.js';

/** One candidate line of a list block (a fact, a recalled entry) and the record it names. */
export interface LineItem {
  id: string;
  line: string;
  /** Tokens of `line` when already known (cached); counted otherwise. */
  tokens?: number;
}

export interface FittedBlock {
  /** The system message, or undefined when not one line fits. */
  message: ChatMessage | undefined;
  included: LineItem[];
  dropped: DroppedItem[];
}

/**
 * Fit list lines into one system message `render(lines)` of at most `maxTokens` (counted with
 * `countMessageTokens` on the whole message, markers and header included). Lines are tried in order and
 * a line that does not fit is skipped, so one oversized entry cannot hide every entry after it.
 *
 * Lines are costed one by one (line + 1 for the newline) rather than by re-counting the whole message
 * for every candidate; BPE merges across a line break usually save tokens, so the estimate tends to err on the
 * safe side. Where it refuses a line the message is counted exactly once to reclaim that slack, and the
 * final message is counted exactly and trimmed, so the limit holds whatever the tokenizer does.
 */
export function fitLines(
  tokenizer: Tokenizer,
  items: readonly LineItem[],
  maxTokens: number,
  render: (lines: readonly string[]) => string,
): FittedBlock {
  const exact = (lines: readonly string[]) =>
    countMessageTokens(tokenizer, { role: 'system', content: render(lines) });
  const included: LineItem[] = [];
  const dropped: DroppedItem[] = [];
  let used = exact([]);
  let calibrated = true;
  for (const item of items) {
    const cost = (item.tokens ?? tokenizer.count(item.line)) + 1;
    if (used + cost > maxTokens && !calibrated) {
      used = exact(included.map((i) => i.line));
      calibrated = true;
    }
    if (used + cost <= maxTokens) {
      included.push(item);
      used += cost;
      calibrated = false;
    } else {
      dropped.push({ id: item.id, reason: 'budget', tokens: cost });
    }
  }
  // Safety net for an estimate that came out low: drop the last lines until the exact count fits.
  // `used` is already exact when nothing was added since the last calibration.
  const linesOf = () => included.map((i) => i.line);
  let total = calibrated ? used : exact(linesOf());
  while (included.length > 0 && total > maxTokens) {
    const last = included.pop()!;
    dropped.push({ id: last.id, reason: 'budget', tokens: (last.tokens ?? tokenizer.count(last.line)) + 1 });
    total = exact(linesOf());
  }
  const lines = linesOf();
  const message: ChatMessage | undefined =
    included.length > 0 ? { role: 'system', content: render(lines) } : undefined;
  return { message, included, dropped };
}
