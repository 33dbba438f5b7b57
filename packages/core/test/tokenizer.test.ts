import { describe, expect, it } from 'vitest';
import { defaultTokenizer } from '../src/index.js';

describe('default tokenizer (o200k_base BPE)', () => {
  it('counts real BPE tokens, not characters or words', () => {
    expect(defaultTokenizer.name).toBe('o200k_base');
    expect(defaultTokenizer.count('')).toBe(0);
    expect(defaultTokenizer.count('Hello, how are you?')).toBe(6);
    // A long unbroken identifier is several tokens although it is one word.
    expect(defaultTokenizer.count('supercalifragilisticexpialidocious')).toBeGreaterThan(3);
  });

  it('treats special-token text in user content as plain text', () => {
    expect(defaultTokenizer.count('<|endoftext|>')).toBeGreaterThan(1);
  });

  it('truncates to at most the requested number of tokens, on a token boundary', () => {
    const text = 'The quick brown fox jumps over the lazy dog. '.repeat(20);
    const cut = defaultTokenizer.truncate(text, 10);
    expect(defaultTokenizer.count(cut)).toBeLessThanOrEqual(10);
    expect(text.startsWith(cut)).toBe(true);
    expect(defaultTokenizer.truncate(text, 0)).toBe('');
    expect(defaultTokenizer.truncate('short', 100)).toBe('short');
  });
});
