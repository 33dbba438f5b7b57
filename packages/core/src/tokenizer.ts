import { countTokens, decode, encode } from 'gpt-tokenizer/encoding/o200k_base';
import { LRUCache } from 'lru-cache';

/** Counts and trims text in model tokens. Every token figure in Kioku goes through one of these. */
export interface Tokenizer {
  /** Encoding name, e.g. `o200k_base`. */
  readonly name: string;
  count(text: string): number;
  /** The longest prefix of `text` that fits in `maxTokens` tokens (cut on a token boundary). */
  truncate(text: string, maxTokens: number): string;
}

/**
 * The o200k_base BPE (GPT-4o, GPT-4.1, o-series), from gpt-tokenizer. Special-token text such as
 * `<|endoftext|>` in user content is counted as plain text rather than rejected.
 */
export const o200kTokenizer: Tokenizer = {
  name: 'o200k_base',
  count(text) {
    if (text.length === 0) return 0;
    return countTokens(text, { disallowedSpecial: new Set() });
  },
  truncate(text, maxTokens) {
    if (maxTokens <= 0) return '';
    const tokens = encode(text, { disallowedSpecial: new Set() });
    if (tokens.length <= maxTokens) return text;
    return decode(tokens.slice(0, maxTokens));
  },
};

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
