import { countTokens, decode, encode } from 'gpt-tokenizer/encoding/o200k_base';

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

export const defaultTokenizer: Tokenizer = o200kTokenizer;
