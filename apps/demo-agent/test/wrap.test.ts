import { describe, expect, it } from 'vitest';
import { wrapToWidth } from '../src/wrap.js';

describe('the tour wraps at the terminal width', () => {
  it('breaks long lines between words, keeps the indent, never splits a word', () => {
    const line =
      '  HashingEmbedder matched the word pieces of "kuberntes" and "Kubernetes", not their meaning';
    const wrapped = wrapToWidth(line, 40).split('\n');
    expect(wrapped.every((l) => l.length <= 40)).toBe(true);
    expect(wrapped.every((l) => l.startsWith('  ') && !l.startsWith('   '))).toBe(true);
    expect(wrapped.join(' ').replace(/\s+/g, ' ').trim()).toBe(line.trim());
    expect(wrapToWidth('short line', 40)).toBe('short line');
    expect(wrapToWidth('a supercalifragilisticexpialidocious b', 10)).toBe(
      'a\nsupercalifragilisticexpialidocious\nb',
    );
  });
});
