import bpeRanks from 'gpt-tokenizer/bpeRanks/o200k_base';
import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/encodingParams/constants';
import { describe, expect, it } from 'vitest';
import { O200K_PATTERN_SOURCE } from '../src/tokens/o200k-pieces.js';
import { o200kTokenBytes } from '../src/tokens/o200k-table.js';

// Core ships the o200k table and pattern itself (gpt-tokenizer installs 52 MB of encodings); these tests
// keep the copies equal to the package they came from (a devDependency).
describe('the vendored o200k_base table and pattern', () => {
  it('has every rank of gpt-tokenizer’s table, in order, byte for byte', () => {
    const vendored = o200kTokenBytes();
    const expected = Array.from(bpeRanks, (token) =>
      token === undefined
        ? undefined
        : (typeof token === 'string' ? Buffer.from(token) : Buffer.from(token)).toString('latin1'),
    );
    expect(vendored.length).toBe(expected.length);
    expect(vendored).toEqual(expected);
  });

  it('splits with gpt-tokenizer’s pattern', () => {
    expect(O200K_PATTERN_SOURCE).toBe(O200K_TOKEN_SPLIT_REGEX.source);
  });
});
