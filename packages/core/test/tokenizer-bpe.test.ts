import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ranks from 'gpt-tokenizer/bpeRanks/o200k_base';
import * as gpt from 'gpt-tokenizer/encoding/o200k_base';
import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/encodingParams/constants';
import { describe, expect, it, vi } from 'vitest';
import * as bpe from '../src/tokens/o200k-bpe.js';
import { patternStats, pieceEnd } from '../src/tokens/o200k-pieces.js';
import { o200kTokenizer } from '../src/tokens/tokenizer.js';
import { seededRandom } from './seeded-random.js';

// Every piece the tokenizer has counted by BPE (rather than found in its piece cache).
const encoded: string[] = [];
vi.mock('../src/tokens/o200k-bpe.js', async (original) => {
  const real = await original<typeof bpe>();
  return {
    ...real,
    countPiece: (piece: string) => {
      encoded.push(piece);
      return real.countPiece(piece);
    },
  };
});

const PLAIN = { disallowedSpecial: new Set<string>() };

/** Random text over letters, digits, punctuation, whitespace, accents, CJK, emoji and lone surrogates. */
function randomText(seed: number, length: number): string {
  const random = seededRandom(seed);
  const alphabet = [
    ...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789',
    ...' \n\t.,;:!?\'"()[]{}<>/\\|-_=+*&^%$#@~`',
    ...'éèàçñüößøåÉ',
    '日',
    '本',
    '語',
    '한',
    'Ж',
    'ا',
    '😀',
    '👍🏽',
    '\u0301',
    '\u00a0',
    '\ud800',
    '\udc00',
  ];
  let text = '';
  while (text.length < length) text += alphabet[Math.floor(random() * alphabet.length)];
  return text;
}

const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The package's own TypeScript: real text (the vendored rank table is a list of tokens, not text). */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (name === 'vendor') return [];
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? sources(full) : name.endsWith('.ts') ? [full] : [];
  });
}

describe('o200k_base BPE (o200k-bpe.ts)', () => {
  it('encodes every piece token for token as gpt-tokenizer does, on random and real text', () => {
    const texts = [
      ...Array.from({ length: 40 }, (_, i) => randomText(i + 1, 2_000)),
      readFileSync(path.join(packageRoot, 'README.md'), 'utf8'),
      ...sources(path.join(packageRoot, 'src')).map((file) => readFileSync(file, 'utf8')),
    ];
    // Bounded work: each distinct piece is compared once (real text repeats most of its pieces), and the
    // differences are collected for one assertion instead of two per piece.
    const distinct = new Set<string>();
    for (const text of texts)
      for (const [piece] of text.matchAll(O200K_TOKEN_SPLIT_REGEX))
        if (piece.length <= bpe.MAX_PIECE_CHARS) distinct.add(piece);
    const differences: string[] = [];
    for (const piece of distinct) {
      const expected = gpt.encode(piece, PLAIN);
      const ours = bpe.encodePiece(piece);
      if (ours.join() !== expected.join() || bpe.countPiece(piece) !== expected.length)
        differences.push(`${JSON.stringify(piece)}: ${ours.join()} (gpt-tokenizer: ${expected.join()})`);
    }
    expect(differences).toEqual([]);
    expect(distinct.size).toBeGreaterThan(1_000);
    const counts = texts.map((text) => o200kTokenizer.count(text));
    expect(counts).toEqual(texts.map((text) => gpt.countTokens(text, PLAIN)));
  });

  it('counts every piece of one to three ASCII characters as BPE does, without encoding it', () => {
    for (let first = 0; first < 0x80; first++) {
      expect(bpe.countShortAscii(String.fromCharCode(first), 0, 1)).toBe(1);
      for (let second = 0; second < 0x80; second++) {
        const piece = `x${String.fromCharCode(first, second)}`;
        expect(bpe.countShortAscii(piece, 1, 3), JSON.stringify(piece)).toBe(bpe.countPiece(piece.slice(1)));
      }
    }
    // Three characters: every ASCII letter, digit and punctuation mark in every position, and random ones.
    const common = ' etaoinsrhldcumfpgwybvkxjqzETAOINS0123456789.,;:!?\'"()[]{}<>/\\+-=_*&^%$#@~`|\n\t';
    const random = seededRandom(3);
    for (let i = 0; i < 60_000; i++) {
      const pick = () =>
        i % 2 === 0
          ? common[Math.floor(random() * common.length)]!
          : String.fromCharCode(Math.floor(random() * 0x80));
      const piece = `${pick()}${pick()}${pick()}`;
      expect(bpe.countShortAscii(`x${piece}`, 1, 4), JSON.stringify(piece)).toBe(bpe.countPiece(piece));
    }
    expect(bpe.countShortAscii('é', 0, 1)).toBe(-1);
    expect(bpe.countShortAscii('aé', 0, 2)).toBe(-1);
    expect(bpe.countShortAscii('abé', 0, 3)).toBe(-1);
    expect(bpe.countShortAscii('abcd', 0, 4)).toBe(-1);
  });

  it('encodes a piece that is one token as that token', () => {
    for (const piece of [' hello', 'ing', '日本', ' {\n', '0123'.slice(0, 3), '😀']) {
      expect(bpe.encodePiece(piece)).toEqual(gpt.encode(piece, PLAIN));
    }
    expect(bpe.encodePiece('')).toEqual([]);
  });

  it('merges two tokens exactly when their bytes together are a token, whatever the pair', () => {
    // The definition: a rank table keyed by each token's bytes (as latin1 text).
    const bytesOf = ranks.map((token) =>
      typeof token === 'string'
        ? Buffer.from(token, 'utf8').toString('latin1')
        : Buffer.from(token).toString('latin1'),
    );
    const rankOf = new Map(bytesOf.map((bytes, rank) => [bytes, rank]));
    const expected = (left: number, right: number) => rankOf.get(bytesOf[left]! + bytesOf[right]!) ?? -1;
    const random = seededRandom(9);
    const pick = () => Math.floor(random() * bytesOf.length);
    let merges = 0;
    for (let i = 0; i < 2_000; i++) {
      // Every split of a token into two tokens merges back into it...
      const rank = pick();
      const bytes = bytesOf[rank]!;
      for (let cut = 1; cut < bytes.length; cut++) {
        const left = rankOf.get(bytes.slice(0, cut));
        const right = rankOf.get(bytes.slice(cut));
        if (left === undefined || right === undefined) continue;
        expect(bpe.mergeOf(left, right)).toBe(rank);
        merges++;
      }
      // ...and a random pair merges only when its bytes together are a token.
      const [left, right] = [pick(), pick()];
      expect(bpe.mergeOf(left, right)).toBe(expected(left, right));
    }
    expect(merges).toBeGreaterThan(2_000);
  });
});

describe('o200k_base pre-tokenizer (o200k-pieces.ts)', () => {
  const pieces = (text: string) => {
    const out: string[] = [];
    for (let at = 0; at < text.length; ) {
      const end = pieceEnd(text, at);
      out.push(text.slice(at, end));
      at = end;
    }
    return out;
  };
  const byPattern = (text: string) => Array.from(text.matchAll(O200K_TOKEN_SPLIT_REGEX), ([piece]) => piece);

  it('splits every text where the o200k pattern does: all of ASCII, with and without other characters', () => {
    const random = seededRandom(5);
    const ascii = Array.from({ length: 128 }, (_, code) => String.fromCharCode(code));
    // Few characters, so that contractions, runs of blanks and line breaks and case changes are frequent.
    const dense = [..." \n\r\t\v\f'aAsSlLeEvVrRdDmMtT1./-"];
    const other = [
      'é',
      'Ü',
      'ǅ',
      'ʰ',
      '\u0301',
      '\u00a0',
      '\u3000',
      '\u2028',
      '日',
      '²',
      '٣',
      '—',
      '😀',
      '\ud800',
    ];
    for (let i = 0; i < 20_000; i++) {
      const alphabet = i % 2 === 0 ? ascii : dense;
      const rare = (i % 3) * 0.1;
      let text = '';
      for (let n = 1 + Math.floor(random() * 40); n > 0; n--) {
        const from = random() < rare ? other : alphabet;
        text += from[Math.floor(random() * from.length)];
      }
      expect(pieces(text), JSON.stringify(text)).toEqual(byPattern(text));
    }
  });

  it('leaves only pieces that touch a character outside ASCII to the pattern', () => {
    const ascii = `[${JSON.stringify({ id: 'f1', content: "It's 42 o'clock.\n\tOK" })}]  \r\n// done`;
    const before = patternStats.pieces;
    pieces(ascii.repeat(50));
    expect(patternStats.pieces).toBe(before);
    pieces('café au lait, naïve');
    expect(patternStats.pieces - before).toBe(2);
  });

  it("splits real text (this package's README and sources) where the pattern does", () => {
    const texts = [
      readFileSync(path.join(packageRoot, 'README.md'), 'utf8'),
      ...sources(path.join(packageRoot, 'src')).map((file) => readFileSync(file, 'utf8')),
    ];
    for (const text of texts) expect(pieces(text)).toEqual(byPattern(text));
  });
});

describe('o200kTokenizer piece cache', () => {
  it('encodes each distinct piece once, so JSON and base64 cost a lookup per recurring piece', () => {
    const records = Array.from({ length: 2_000 }, (_, i) =>
      JSON.stringify({ id: `f${i % 50}`, userId: 'alice', tags: ['imported', `n${i % 17}`] }),
    );
    const json = `[${records.join(',')}]`;
    const distinct = new Set(Array.from(json.matchAll(O200K_TOKEN_SPLIT_REGEX), ([piece]) => piece));
    encoded.length = 0;
    o200kTokenizer.count(json);
    o200kTokenizer.count(` ${json}`);
    // A few pieces may have been cached by earlier tests; none is encoded twice.
    expect(encoded.length).toBeLessThanOrEqual(distinct.size + 1);
    expect(new Set(encoded).size).toBe(encoded.length);
  });
});
