import { describe, expect, it } from 'vitest';
import { chunkText, defaultTokenizer } from '../src/index.js';

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
