import { describe, expect, it } from 'vitest';
import { defaultTokenizer } from '../src/index.js';
import { chunkLines, chunkText } from '../src/store/documents/chunker.js';

describe('chunkText', () => {
  it('keeps every chunk within the token limit and loses no words', () => {
    const paragraphs = Array.from({ length: 30 }, (_, i) =>
      `Paragraph ${i} talks about topic ${i}. `.repeat(5).trim(),
    );
    const text = paragraphs.join('\n\n');
    const chunks = chunkText(text, defaultTokenizer, 60);
    expect(chunks.length).toBeGreaterThan(5);
    for (const chunk of chunks) expect(chunk.tokenCount).toBeLessThanOrEqual(60);
    expect(chunks.map((c) => c.index)).toEqual(chunks.map((_, i) => i));
    const words = (s: string) => s.split(/\s+/).filter(Boolean);
    expect(words(chunks.map((c) => c.text).join(' '))).toEqual(words(text));
  });

  it('cuts a single sentence longer than the limit on token boundaries', () => {
    const sentence = 'word '.repeat(500).trim();
    const chunks = chunkText(sentence, defaultTokenizer, 50);
    expect(chunks.length).toBeGreaterThanOrEqual(10);
    for (const chunk of chunks) expect(chunk.tokenCount).toBeLessThanOrEqual(50);
  });
});

describe('chunkText on large input', () => {
  it('splits a megabyte without any break into bounded chunks quickly enough to finish', () => {
    const text = 'x'.repeat(1024 * 1024);
    const chunks = chunkText(text, defaultTokenizer, 300);
    for (const chunk of chunks) expect(chunk.tokenCount).toBeLessThanOrEqual(300);
    // Chunks are joined by blank lines when packed; without whitespace nothing is lost or added.
    expect(
      chunks
        .map((c) => c.text)
        .join('')
        .replace(/\s/g, '') === text,
    ).toBe(true);
  });
});

describe('chunkLines', () => {
  const tok = defaultTokenizer;
  const log = Array.from({ length: 200 }, (_, i) => `line ${i}: GET /api/items/${i} 200 in ${i % 17}ms`).join(
    '\n',
  );

  it('keeps whole lines, exactly as written, in chunks within the limit', () => {
    const chunks = chunkLines(log, tok, 60);
    expect(chunks.length).toBeGreaterThan(5);
    expect(chunks.map((c) => c.text).join('\n')).toBe(log);
    for (const [i, c] of chunks.entries()) {
      expect(c.index).toBe(i);
      expect(c.tokenCount).toBe(tok.count(c.text));
      expect(c.tokenCount).toBeLessThanOrEqual(60);
      expect(log.split('\n')).toEqual(expect.arrayContaining(c.text.split('\n')));
    }
  });

  it('cuts a line longer than the limit into chunks of its own', () => {
    const long = 'x'.repeat(3_000);
    const chunks = chunkLines(`short\n${long}\nafter`, tok, 50);
    expect(chunks[0]!.text).toBe('short');
    expect(chunks.at(-1)!.text).toBe('after');
    const middle = chunks.slice(1, -1);
    expect(middle.length).toBeGreaterThan(1);
    expect(middle.map((c) => c.text).join('')).toBe(long);
    for (const c of middle) expect(c.tokenCount).toBeLessThanOrEqual(50);
  });
});
