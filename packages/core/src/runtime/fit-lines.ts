import { type ChatMessage, countMessageTokens, rememberMessageTokens } from '../model/messages.js';
import { countsBySegment, type Tokenizer } from '../tokens/tokenizer.js';
import type { DroppedItem } from './middleware.js';

/** One candidate line of a list block (a fact, a recalled entry) and the record it names. */
export interface LineItem {
  id: string;
  line: string;
  /** Tokens of `line` when already known (cached); counted otherwise. */
  tokens?: number;
}

export interface FittedBlock<I extends LineItem = LineItem> {
  /** The system message, or undefined when not one line fits. */
  message: ChatMessage | undefined;
  included: I[];
  dropped: DroppedItem[];
}

/**
 * The shape of a block whose renderer is `head + lines.map((l) => l + '\n').join('') + tail`: given to a
 * LineFitter, it lets the fitter count the block line by line with a tokenizer that counts by segment.
 */
export interface LineFrame {
  head: string;
  tail: string;
}

/** `count(line + '\n')` per tokenizer and item: the items of a block are cached by the features that build it. */
const lineCounts = new WeakMap<Tokenizer, WeakMap<LineItem, number>>();

/** Whether a text can follow a line break without a token spanning the break (see `lineSegments`). */
function startsSegment(text: string): boolean {
  return text.length > 0 && text[0] !== '/' && !/\s/.test(text[0]!);
}

/** The cheapest line there can be (`- x` and its newline): below this much room nothing more fits. */
const MIN_LINE_TOKENS = 2;

/**
 * Fits list lines into one system message `render(lines)` of at most `maxTokens` (counted with
 * `countMessageTokens` on the whole message, markers and header included), one `offer` at a time, so a
 * caller can read candidates page by page and stop once the block is full. Lines are tried in order and
 * a line that does not fit is skipped, so one oversized entry cannot hide every entry after it.
 *
 * Lines are costed one by one (line + 1 for the newline) rather than by re-counting the whole message
 * for every candidate; BPE merges across a line break usually save tokens, so the estimate tends to err on
 * the safe side. Where it refuses a line the message is counted exactly once to reclaim that slack, and
 * the final message is counted exactly and trimmed, so the limit holds whatever the tokenizer does.
 */
export class LineFitter<I extends LineItem = LineItem> {
  readonly included: I[] = [];
  readonly dropped: DroppedItem[] = [];
  readonly #tokenizer: Tokenizer;
  readonly #maxTokens: number;
  readonly #render: (lines: readonly string[]) => string;
  #used: number;
  #calibrated = true;
  /** The exact count of the empty block. */
  readonly #base: number;
  /**
   * With a frame and a tokenizer that counts by segment: the included lines' `count(line + '\n')` summed,
   * so the block's exact count is `#base + #sum` (every line starts a segment). Undefined otherwise.
   */
  #sum: number | undefined;
  readonly #lineCounts: WeakMap<LineItem, number> | undefined;

  constructor(
    tokenizer: Tokenizer,
    maxTokens: number,
    render: (lines: readonly string[]) => string,
    frame?: LineFrame,
  ) {
    this.#tokenizer = tokenizer;
    this.#maxTokens = maxTokens;
    this.#render = render;
    this.#base = this.#exact([]);
    this.#used = this.#base;
    if (
      frame &&
      countsBySegment(tokenizer) &&
      (frame.head === '' || frame.head.endsWith('\n')) &&
      (frame.tail === '' || startsSegment(frame.tail))
    ) {
      this.#sum = 0;
      let counts = lineCounts.get(tokenizer);
      if (!counts) {
        counts = new WeakMap();
        lineCounts.set(tokenizer, counts);
      }
      this.#lineCounts = counts;
    }
  }

  /** True when not even the cheapest line could still fit. */
  get full(): boolean {
    return this.#calibrated && this.#used + MIN_LINE_TOKENS > this.#maxTokens;
  }

  /** Adds the line when it fits (true), records it as dropped for the budget otherwise (false). */
  offer(item: I): boolean {
    const cost = (item.tokens ?? this.#tokenizer.count(item.line)) + 1;
    if (this.#used + cost > this.#maxTokens && !this.#calibrated) {
      this.#used = this.#exactIncluded();
      this.#calibrated = true;
    }
    if (this.#used + cost <= this.#maxTokens) {
      this.included.push(item);
      if (this.#sum !== undefined)
        this.#sum = startsSegment(item.line) ? this.#sum + this.#lineCount(item) : undefined;
      this.#used += cost;
      this.#calibrated = false;
      return true;
    }
    this.dropped.push({ id: item.id, reason: 'budget', tokens: cost });
    return false;
  }

  /** The block: the exact count is checked and, if the estimate came out low, the last lines go. */
  finish(): FittedBlock<I> {
    // `used` is already exact when nothing was added since the last calibration.
    let total = this.#calibrated ? this.#used : this.#exactIncluded();
    while (this.included.length > 0 && total > this.#maxTokens) {
      const last = this.included.pop()!;
      if (this.#sum !== undefined) this.#sum -= this.#lineCount(last);
      const tokens = (last.tokens ?? this.#tokenizer.count(last.line)) + 1;
      this.dropped.push({ id: last.id, reason: 'budget', tokens });
      total = this.#exactIncluded();
    }
    const message: ChatMessage | undefined =
      this.included.length > 0 ? { role: 'system', content: this.#render(this.#lines()) } : undefined;
    // `total` is the message's exact count (by segment, or counted whole): the runner need not count it again.
    if (message) rememberMessageTokens(this.#tokenizer, message, total);
    return { message, included: this.included, dropped: this.dropped };
  }

  #lines(): string[] {
    return this.included.map((i) => i.line);
  }

  /** `count(line + '\n')`, remembered per item. */
  #lineCount(item: LineItem): number {
    let n = this.#lineCounts!.get(item);
    if (n === undefined) {
      n = this.#tokenizer.count(`${item.line}\n`);
      this.#lineCounts!.set(item, n);
    }
    return n;
  }

  /** The exact count of the block of the included lines. */
  #exactIncluded(): number {
    // By segment: the block is `head`, each line and its break, `tail`, and each of them starts a segment.
    return this.#sum !== undefined ? this.#base + this.#sum : this.#exact(this.#lines());
  }

  #exact(lines: readonly string[]): number {
    return countMessageTokens(this.#tokenizer, { role: 'system', content: this.#render(lines) });
  }
}

/** Fits a whole candidate list at once (see LineFitter). */
export function fitLines(
  tokenizer: Tokenizer,
  items: readonly LineItem[],
  maxTokens: number,
  render: (lines: readonly string[]) => string,
  frame?: LineFrame,
): FittedBlock {
  const fitter = new LineFitter(tokenizer, maxTokens, render, frame);
  for (const item of items) fitter.offer(item);
  return fitter.finish();
}
