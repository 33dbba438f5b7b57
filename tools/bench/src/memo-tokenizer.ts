import { defaultTokenizer, type Tokenizer } from '@kioku/core';

/**
 * A tokenizer that remembers the counts of long texts (least recently used out first). Counting is a
 * pure function of the text, so prompts and ledgers are exactly those of `inner`; what it saves is the
 * re-counting of the same blocks within and across turns (the runner counts every middleware's
 * messages after the middleware did, full-text knowledge is the same text every turn). Kioku accepts
 * any `Tokenizer` (`KiokuBuilder({ tokenizer })`, the document store's `tokenizer` option): this is a
 * user-level setting, measured here as an alternative, not Kioku's default.
 */
export function memoTokenizer(inner: Tokenizer = defaultTokenizer, options: { maxEntries?: number } = {}) {
  const maxEntries = options.maxEntries ?? 2048;
  /** Texts shorter than this are counted directly: hashing them costs about as much as counting. */
  const minChars = 200;
  const counts = new Map<string, number>();
  const tokenizer: Tokenizer = {
    name: inner.name,
    count(text) {
      if (text.length < minChars) return inner.count(text);
      const known = counts.get(text);
      if (known !== undefined) {
        counts.delete(text);
        counts.set(text, known);
        return known;
      }
      const tokens = inner.count(text);
      counts.set(text, tokens);
      if (counts.size > maxEntries) counts.delete(counts.keys().next().value as string);
      return tokens;
    },
    truncate: (text, maxTokens) => inner.truncate(text, maxTokens),
  };
  return tokenizer;
}
