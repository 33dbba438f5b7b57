import { countTokens, encode } from 'gpt-tokenizer/encoding/o200k_base';
import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/encodingParams/constants';
import { LRUCache } from 'lru-cache';
import { encodeLongPiece, tokenByteLength } from './long-piece-bpe.js';

/** Counts and trims text in model tokens. Every token figure in Kioku goes through one of these. */
export interface Tokenizer {
  /** Encoding name, e.g. `o200k_base`. */
  readonly name: string;
  count(text: string): number;
  /** The longest prefix of `text` that fits in `maxTokens` tokens (cut on a token boundary). */
  truncate(text: string, maxTokens: number): string;
}

/** Pieces longer than this many characters are encoded by `encodeWindows`, not gpt-tokenizer (O(n²)). */
const LONG_PIECE_CHARS = 64;
/**
 * A piece longer than LONG_PIECE_CHARS needs one of these runs: letters and marks (a word piece is at most
 * one leading character, the run and a 3-character contraction), punctuation with its trailing line breaks,
 * or whitespace. A text without any goes to gpt-tokenizer whole, in one pass.
 */
const MAY_HOLD_LONG_PIECE = new RegExp(
  `[\\p{L}\\p{M}]{${LONG_PIECE_CHARS - 4},}|(?:[^\\s\\p{L}\\p{N}]|[\\r\\n]){${LONG_PIECE_CHARS},}|\\s{${LONG_PIECE_CHARS},}`,
  'u',
);
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/** Long pieces are encoded in windows of this many characters (exact up to it; see `encodeWindows`). */
const WINDOW_CHARS = 512;
const windowCache = new Map<string, number[]>();

/**
 * A long piece's tokens, window by window: exact for pieces up to WINDOW_CHARS characters, which ordinary
 * text never exceeds. Past it, tokens do not merge across a window's edge, so the count can be a token or
 * so more per window than the exact one (over-counting keeps budgets safe). Repeated windows (a letter
 * repeated a million times) are encoded once.
 */
function encodeWindows(piece: string): number[] {
  if (piece.length <= WINDOW_CHARS) return encodeLongPiece(piece);
  const tokens: number[] = [];
  for (let at = 0; at < piece.length; ) {
    let end = Math.min(piece.length, at + WINDOW_CHARS);
    // Never split a surrogate pair.
    if (end < piece.length && /[\uD800-\uDBFF]/.test(piece[end - 1]!)) end--;
    const window = piece.slice(at, end);
    let encoded = windowCache.get(window);
    if (!encoded) {
      encoded = encodeLongPiece(window);
      if (windowCache.size >= 1_000) windowCache.clear();
      windowCache.set(window, encoded);
    }
    for (const token of encoded) tokens.push(token);
    at = end;
  }
  return tokens;
}

/**
 * `text` as o200k_base tokens: gpt-tokenizer for ordinary pieces, `encodeLongPiece` for pieces over
 * LONG_PIECE_CHARS characters (its own BPE is quadratic in a piece's length). The text between two long
 * pieces is handed to gpt-tokenizer as one span; it ends where a piece ends, so gpt-tokenizer's
 * pre-tokenizer splits it into the same pieces. `visit` returns false to stop early.
 */
interface TokenRun {
  count: number;
  tokens(): number[];
  /** UTF-8 bytes of the run's text. */
  bytes(): number;
}

function eachTokenRun(text: string, visit: (run: TokenRun) => boolean): void {
  const span = (slice: string): TokenRun => ({
    count: countTokens(slice, PLAIN_TEXT),
    tokens: () => encode(slice, PLAIN_TEXT),
    bytes: () => Buffer.byteLength(slice, 'utf8'),
  });
  if (!MAY_HOLD_LONG_PIECE.test(text)) {
    visit(span(text));
    return;
  }
  let from = 0;
  for (const match of text.matchAll(O200K_TOKEN_SPLIT_REGEX)) {
    if (match[0].length <= LONG_PIECE_CHARS) continue;
    if (match.index > from && !visit(span(text.slice(from, match.index)))) return;
    const piece = match[0];
    const tokens = encodeWindows(piece);
    if (
      !visit({ count: tokens.length, tokens: () => tokens, bytes: () => Buffer.byteLength(piece, 'utf8') })
    ) {
      return;
    }
    from = match.index + match[0].length;
  }
  if (from < text.length) visit(span(text.slice(from)));
}

/**
 * The o200k_base BPE (GPT-4o, GPT-4.1, o-series), from gpt-tokenizer, in time linear in the text whatever
 * it holds: exact for every piece up to 512 characters (all ordinary text), window by window past that (see
 * `encodeWindows`). Special-token text such as `<|endoftext|>` in user
 * content is counted as plain text rather than rejected.
 */
export const o200kTokenizer: Tokenizer = {
  name: 'o200k_base',
  count(text) {
    if (text.length === 0) return 0;
    let tokens = 0;
    eachTokenRun(text, (run) => {
      tokens += run.count;
      return true;
    });
    return tokens;
  },
  truncate(text, maxTokens) {
    if (maxTokens <= 0) return '';
    let kept = 0;
    let bytes = 0;
    let whole = true;
    eachTokenRun(text, (run) => {
      const room = maxTokens - kept;
      const tokens = run.count <= room ? undefined : run.tokens().slice(0, room);
      if (!tokens) {
        kept += run.count;
        bytes += run.bytes();
        return true;
      }
      for (const token of tokens) bytes += tokenByteLength(token);
      whole = false;
      return false;
    });
    return whole ? text : utf8Prefix(text, bytes);
  },
};

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
  const cache = new LRUCache<string, number | string>({
    maxSize: options.maxChars ?? 4_000_000,
    max: 200_000,
    // A cut is keyed by its limit and text, and sized by both strings.
    sizeCalculation: (value, key) => key.length + (typeof value === 'string' ? value.length : 0),
  });
  const remembered = (text: string): number => {
    const known = cache.get(text);
    if (typeof known === 'number') return known;
    const tokens = inner.count(text);
    cache.set(text, tokens);
    return tokens;
  };
  return {
    name: inner.name,
    count(text) {
      if (text.length < minChars) return inner.count(text);
      if (!options.lineSegments) return remembered(text);
      let tokens = 0;
      for (const segment of lineSegments(text)) {
        tokens += segment.length < minChars ? inner.count(segment) : remembered(segment);
      }
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
