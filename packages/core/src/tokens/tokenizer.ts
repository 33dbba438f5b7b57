import { SizedLru } from '../foundation/sized-lru.js';
import { countPiece, countShortAscii, encodePiece, tokenByteLength } from './o200k-bpe.js';
import { pieceEnd } from './o200k-pieces.js';
import { cachedPieceCount } from './piece-cache.js';

/** Counts and trims text in model tokens. Every token figure in Kioku goes through one of these. */
export interface Tokenizer {
  /** Encoding name, e.g. `o200k_base`. */
  readonly name: string;
  count(text: string): number;
  /** The longest prefix of `text` that fits in `maxTokens` tokens (cut on a token boundary). */
  truncate(text: string, maxTokens: number): string;
}

/** Pieces up to this many characters are counted through `cachedPieceCount`. */
const CACHED_PIECE_CHARS = 64;

/**
 * Longer pieces are encoded in windows of this many characters: exact up to it, and past it tokens do not
 * merge across a window's edge, so a count can be a token or so more per window than the exact one
 * (over-counting keeps budgets safe). Only runs without spaces or punctuation this long (base64 without
 * line breaks, a DNA sequence, one letter repeated) ever reach it.
 */
const WINDOW_CHARS = 512;

/** Where the windows of the piece `text[start..end)` end, never splitting a surrogate pair. */
function windowEnd(text: string, at: number, end: number): number {
  const cut = Math.min(end, at + WINDOW_CHARS);
  const last = text.charCodeAt(cut - 1);
  return cut < end && last >= 0xd800 && last <= 0xdbff ? cut - 1 : cut;
}

/**
 * The last window counted, so that a run repeating itself (a letter repeated a million times) is counted
 * once: consecutive windows of such a run are equal, and comparing two strings that differ stops at the
 * first difference, where a map of windows would hash every one of them.
 */
let lastWindow = '';
let lastWindowCount = 0;

function countPieceAt(text: string, start: number, end: number): number {
  const short = countShortAscii(text, start, end);
  if (short >= 0) return short;
  if (end - start <= CACHED_PIECE_CHARS) return cachedPieceCount(text, start, end);
  let tokens = 0;
  for (let at = start; at < end; ) {
    const cut = windowEnd(text, at, end);
    const window = text.slice(at, cut);
    if (window !== lastWindow) {
      lastWindowCount = countPiece(window);
      lastWindow = window;
    }
    tokens += lastWindowCount;
    at = cut;
  }
  return tokens;
}

/**
 * The tokens of the pre-tokenized piece `text[start..end)`, window by window as `countPieceAt` counts them.
 * `visit` gets each window's tokens and its length in characters, and returns false to stop.
 */
function pieceTokens(
  text: string,
  start: number,
  end: number,
  visit: (tokens: readonly number[], chars: number) => boolean,
): void {
  for (let at = start; at < end; ) {
    const cut = windowEnd(text, at, end);
    if (!visit(encodePiece(text.slice(at, cut)), cut - at)) return;
    at = cut;
  }
}

/**
 * The o200k_base BPE (GPT-4o, GPT-4.1, o-series) over gpt-tokenizer's pre-tokenizer pattern and rank table
 * (see `o200k-pieces.ts` and `o200k-bpe.ts`),
 * in time linear in the text whatever it holds: exact for every piece up to 512 characters (all ordinary
 * text), window by window past that (see `pieceTokens`). Special-token text such as `<|endoftext|>` in user
 * content is counted as plain text rather than rejected.
 */
export const o200kTokenizer: Tokenizer = {
  name: 'o200k_base',
  count(text) {
    let tokens = 0;
    for (let at = 0; at < text.length; ) {
      const end = pieceEnd(text, at);
      tokens += countPieceAt(text, at, end);
      at = end;
    }
    return tokens;
  },
  truncate(text, maxTokens) {
    if (maxTokens <= 0) return '';
    let kept = 0;
    for (let start = 0; start < text.length; ) {
      const end = pieceEnd(text, start);
      let at = start;
      let cut: number | undefined;
      pieceTokens(text, start, end, (tokens, chars) => {
        if (kept + tokens.length <= maxTokens) {
          kept += tokens.length;
          at += chars;
          return true;
        }
        // The window's first tokens that fit, as a prefix of the window's text.
        let bytes = 0;
        for (const token of tokens.slice(0, maxTokens - kept)) bytes += tokenByteLength(token);
        cut = at + utf8Prefix(text.slice(at, at + chars), bytes).length;
        return false;
      });
      if (cut !== undefined) return text.slice(0, cut);
      start = end;
    }
    return text;
  },
};

/**
 * Tokenizers whose count of a text is the sum of the counts of its line segments (see {@link lineSegments}):
 * o200k_base and the memoized tokenizers over it. A caller may then count a block of lines line by line.
 */
const segmentAdditive = new WeakSet<Tokenizer>([o200kTokenizer]);

/** Whether `tokenizer` counts a text as the sum of its line segments' counts (core's o200k_base ones). */
export function countsBySegment(tokenizer: Tokenizer): boolean {
  return segmentAdditive.has(tokenizer);
}

/**
 * The longest prefix of `text` whose UTF-8 form has at most `maxBytes` bytes. A cut inside a character
 * (a token boundary can fall inside a multi-byte character) drops that character, so the result is
 * always a prefix of the text, never a replacement character.
 */
function utf8Prefix(text: string, maxBytes: number): string {
  let bytes = 0;
  let at = 0;
  while (at < text.length) {
    const code = text.codePointAt(at)!;
    const size = code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    if (bytes + size > maxBytes) break;
    bytes += size;
    at += code >= 0x10000 ? 2 : 1;
  }
  return text.slice(0, at);
}

export interface MemoizedTokenizerOptions {
  /** Texts (and line segments) shorter than this are counted directly (default 32 characters). */
  minChars?: number;
  /** The most characters of text kept, least recently used out first (default 4 million, ~8 MB). */
  maxChars?: number;
  /**
   * Count a long text line by line and add up (exact only for tokenizers whose pre-tokenizer never joins
   * a line break to what follows it, see `lineSegments`; true for o200k_base). A block that changes by
   * one line then costs one line of BPE, not the whole block. Default false.
   */
  lineSegments?: boolean;
}

/**
 * `inner` with the counts (and cuts) of long texts remembered. A turn counts the same blocks several
 * times — a middleware fits its block, the runner checks every middleware's messages, full-text knowledge
 * and replayed turns are the same text turn after turn — and BPE costs about a microsecond per token
 * while a lookup hashes the string once (a few nanoseconds per character). Counting is a pure function of the text, so prompts and ledgers
 * are exactly those of `inner`.
 */
export function memoizedTokenizer(inner: Tokenizer, options: MemoizedTokenizerOptions = {}): Tokenizer {
  const minChars = options.minChars ?? 32;
  const cache = new SizedLru<number | string>({
    maxSize: options.maxChars ?? 4_000_000,
    maxEntries: 200_000,
    // A cut is keyed by its limit and text, and sized by both strings.
    sizeOf: (value, key) => key.length + (typeof value === 'string' ? value.length : 0),
  });
  const remembered = (text: string): number => {
    const known = cache.get(text);
    if (typeof known === 'number') return known;
    const tokens = inner.count(text);
    cache.set(text, tokens);
    return tokens;
  };
  const memoized: Tokenizer = {
    name: inner.name,
    count(text) {
      if (text.length < minChars) return inner.count(text);
      if (!options.lineSegments) return remembered(text);
      // The whole text first: a block counted again (the runner's check, the next turn's unchanged block)
      // is one lookup, not one per line.
      const known = cache.get(text);
      if (typeof known === 'number') return known;
      let tokens = 0;
      for (const segment of lineSegments(text)) {
        tokens += segment.length < minChars ? inner.count(segment) : remembered(segment);
      }
      cache.set(text, tokens);
      return tokens;
    },
    truncate(text, maxTokens) {
      if (text.length < minChars) return inner.truncate(text, maxTokens);
      // Cuts and counts share the cache; the type check makes a text that happens to look like a cut key harmless.
      const key = `\u0000${maxTokens}\u0000${text}`;
      const known = cache.get(key);
      if (typeof known === 'string') return known;
      const cut = inner.truncate(text, maxTokens);
      cache.set(key, cut);
      return cut;
    },
  };
  // Memoizing changes no count.
  if (segmentAdditive.has(inner)) segmentAdditive.add(memoized);
  return memoized;
}

/**
 * Splits `text` after every line break that is followed by a character other than whitespace or `/`.
 * o200k_base's pre-tokenizer (and cl100k_base's) always ends a piece there: no piece pattern continues
 * past a `\n` except into more whitespace or, after punctuation, into `/`; and BPE merges stay within a
 * piece. So the token count of `text` is the sum of its segments' counts (checked against the plain
 * tokenizer on random and real text in tokenizer.test.ts).
 */
export function* lineSegments(text: string): Generator<string> {
  let start = 0;
  let at = text.indexOf('\n');
  while (at !== -1 && at + 1 < text.length) {
    const next = text[at + 1]!;
    if (next !== '/' && !/\s/.test(next)) {
      yield text.slice(start, at + 1);
      start = at + 1;
    }
    at = text.indexOf('\n', at + 1);
  }
  yield text.slice(start);
}

/** o200k_base, memoized for long texts and counted line by line (see `memoizedTokenizer`). */
export const defaultTokenizer: Tokenizer = memoizedTokenizer(o200kTokenizer, { lineSegments: true });
