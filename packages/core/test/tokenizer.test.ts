import { describe, expect, it } from 'vitest';
import { defaultTokenizer, type Tokenizer } from '../src/index.js';
import { lineSegments, memoizedTokenizer, o200kTokenizer } from '../src/tokens/tokenizer.js';
import { seededRandom } from './seeded-random.js';

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

describe('memoizedTokenizer', () => {
  const countingInner = () => {
    const calls = { count: 0, truncate: 0 };
    const inner: Tokenizer = {
      name: 'o200k_base',
      count: (text) => {
        calls.count++;
        return o200kTokenizer.count(text);
      },
      truncate: (text, max) => {
        calls.truncate++;
        return o200kTokenizer.truncate(text, max);
      },
    };
    return { inner, calls };
  };
  const long = (seed: string) => `${seed} `.repeat(200);

  it('gives exactly the inner counts and cuts, and counts a repeated long text once', () => {
    const { inner, calls } = countingInner();
    const memo = memoizedTokenizer(inner);
    const text = long('Remembered paragraph about Lisbon and green tea.');
    const rebuilt = [text.slice(0, 100), text.slice(100)].join(''); // equal content, another string
    expect(memo.count(text)).toBe(o200kTokenizer.count(text));
    expect(memo.count(rebuilt)).toBe(o200kTokenizer.count(text));
    expect(calls.count).toBe(1);
    expect(memo.truncate(text, 25)).toBe(o200kTokenizer.truncate(text, 25));
    expect(memo.truncate(text, 25)).toBe(o200kTokenizer.truncate(text, 25));
    expect(memo.truncate(text, 26)).toBe(o200kTokenizer.truncate(text, 26));
    expect(calls.truncate).toBe(2);
    // Short texts go straight to the inner tokenizer.
    memo.count('short');
    memo.count('short');
    expect(calls.count).toBe(3);
  });

  it('keeps at most maxChars of text and still answers correctly after eviction', () => {
    const { inner, calls } = countingInner();
    const memo = memoizedTokenizer(inner, { maxChars: 30_000 });
    const texts = Array.from({ length: 10 }, (_, i) => long(`Paragraph ${i} of a long document.`));
    for (const text of texts) memo.count(text);
    expect(calls.count).toBe(10);
    // The oldest ones were evicted (10 × ~7k chars > 30k): counted again, with the same result.
    expect(memo.count(texts[0]!)).toBe(o200kTokenizer.count(texts[0]!));
    expect(calls.count).toBe(11);
    expect(memo.count(texts[9]!)).toBe(o200kTokenizer.count(texts[9]!));
    expect(calls.count).toBe(11);
  });
});

describe('line-by-line counting (the default tokenizer)', () => {
  // A small seeded generator, so a failure reproduces.
  const pieces = [
    'a',
    'Z',
    'é',
    'ß',
    'naïve',
    "don't",
    "'s",
    '42',
    '12345',
    '3.14',
    ' ',
    '  ',
    '\t',
    '\n',
    '\n\n',
    '\r\n',
    '\u00a0',
    '\u3000',
    '/',
    '//',
    '.',
    ',',
    '-',
    '- ',
    '—',
    '…',
    '!?',
    '"',
    '(',
    ')',
    '[x]',
    '<|endoftext|>',
    '日本語',
    '한국어',
    'Привет',
    'مرحبا',
    '😀',
    '👩‍💻',
    '\u0301',
    'https://example.com/a/b',
    '#',
    '**',
    '```',
  ];
  const randomText = (next: () => number) =>
    Array.from(
      { length: 20 + Math.floor(next() * 400) },
      () => pieces[Math.floor(next() * pieces.length)],
    ).join('');

  it('gives exactly the plain o200k_base count on random text full of line breaks, spaces and slashes', () => {
    const next = seededRandom(7);
    for (let i = 0; i < 3000; i++) {
      const text = randomText(next);
      expect(defaultTokenizer.count(text), JSON.stringify(text)).toBe(o200kTokenizer.count(text));
    }
  });

  it('gives exactly the plain count on memory blocks, transcripts and documents', () => {
    const lines = Array.from(
      { length: 300 },
      (_, i) => `- [f${i}] Fact ${i}: Caroline went to the LGBTQ support group on ${i} May.`,
    );
    const texts = [
      `[DYNAMIC_MEMORY]\n${lines.join('\n')}\n[END_DYNAMIC_MEMORY]`,
      `## Handbook\n${'Paragraph one.\n\n  Indented line\n/path/to/file\n'.repeat(50)}`,
      `${'user: hello there\nassistant: hi!\n'.repeat(80)}`,
      `Recalled from long-term memory:\n${lines.slice(0, 50).join('\r\n')}\n`,
    ];
    for (const text of texts) expect(defaultTokenizer.count(text)).toBe(o200kTokenizer.count(text));
  });

  it('splits only where a piece must end', () => {
    expect([...lineSegments('a\nb\n c\n/d\n\ne')]).toEqual(['a\n', 'b\n c\n/d\n\n', 'e']);
  });
});
