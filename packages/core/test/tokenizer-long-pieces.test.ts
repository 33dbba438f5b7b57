import * as gpt from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it, vi } from 'vitest';
import { defaultTokenizer } from '../src/index.js';
import { tokenByteLength } from '../src/tokens/o200k-bpe.js';
import { o200kTokenizer } from '../src/tokens/tokenizer.js';
import { seededRandom } from './seeded-random.js';

// Everything handed to gpt-tokenizer's encoder, whose BPE is quadratic in the length of one pre-tokenized piece.
const handed: string[] = [];
vi.mock('gpt-tokenizer/encoding/o200k_base', async (original) => {
  const real = await original<typeof gpt>();
  return {
    ...real,
    countTokens: (text: string, options?: object) => {
      handed.push(text);
      return real.countTokens(text, options);
    },
    encode: (text: string, options?: object) => {
      handed.push(text);
      return real.encode(text, options);
    },
  };
});

const PLAIN = { disallowedSpecial: new Set<string>() };

/** Random text over `alphabet`, with ordinary words around it. */
function sample(alphabet: string, length: number, seed: number): string {
  const chars = [...alphabet];
  const random = seededRandom(seed);
  let text = 'Before it, "words"; ';
  for (let i = 0; i < length; i++) text += chars[Math.floor(random() * chars.length)];
  return `${text} and after it.\n`;
}

const ALPHABETS = [
  'ACGT',
  'A',
  'ab',
  'xyzXYZ',
  '!?#',
  'é日本語',
  '😀🎉',
  ' ',
  '\n\n ',
  'aé😀日!',
  '0123456789',
];

describe('o200k_base on long runs without whitespace (one pre-tokenized piece)', () => {
  it("never hands gpt-tokenizer's encoder any text (only its pattern and rank table are used)", () => {
    handed.length = 0;
    expect(o200kTokenizer.count('A'.repeat(100_000))).toBe(12_500);
    o200kTokenizer.count(sample('ACGT', 50_000, 1));
    o200kTokenizer.truncate(sample('😀🎉', 20_000, 2), 1_000);
    defaultTokenizer.count('Hello, world.\n'.repeat(100));
    expect(handed).toEqual([]);
  });

  it('counts exactly what gpt-tokenizer counts, for every alphabet, in pieces up to 512 characters', () => {
    for (const [n, alphabet] of ALPHABETS.entries()) {
      for (const length of [1, 63, 64, 65, 200, 511]) {
        const text = sample(alphabet, length, n * 7919 + length);
        expect(o200kTokenizer.count(text), `${JSON.stringify(alphabet)} × ${length}`).toBe(
          gpt.countTokens(text, PLAIN),
        );
      }
    }
  });

  it('counts longer pieces window by window: never fewer tokens, at most two more per 512 characters', () => {
    for (const [n, alphabet] of ALPHABETS.entries()) {
      const text = sample(alphabet, 3_000, n + 11);
      const exact = gpt.countTokens(text, PLAIN);
      const counted = o200kTokenizer.count(text);
      expect(counted, JSON.stringify(alphabet)).toBeGreaterThanOrEqual(exact);
      expect(counted - exact, JSON.stringify(alphabet)).toBeLessThanOrEqual(2 * Math.ceil(3_000 / 512));
    }
  });

  it('truncates to the same tokens as gpt-tokenizer, always to a prefix of the text', () => {
    for (const [n, alphabet] of ALPHABETS.entries()) {
      const text = sample(alphabet, 500, n + 1);
      const tokens = gpt.encode(text, PLAIN);
      for (const keep of [1, 5, Math.floor(tokens.length / 2), tokens.length - 1]) {
        const cut = o200kTokenizer.truncate(text, keep);
        expect(text.startsWith(cut)).toBe(true);
        expect(gpt.countTokens(cut, PLAIN)).toBeLessThanOrEqual(keep);
        // The cut keeps every whole character of the first `keep` tokens, and nothing more.
        const keptBytes = tokens.slice(0, keep).reduce((sum, token) => sum + tokenByteLength(token), 0);
        const nextChar = String.fromCodePoint(text.codePointAt(cut.length)!);
        expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(keptBytes);
        expect(Buffer.byteLength(cut + nextChar)).toBeGreaterThan(keptBytes);
      }
    }
  });

  it('counts a 5 MB single letter through the default tokenizer (offload, details, documents, ledger)', () => {
    expect(defaultTokenizer.count('A'.repeat(5_000_000))).toBe(625_000);
  });
});
