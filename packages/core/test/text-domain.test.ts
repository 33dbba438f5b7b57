import { describe, expect, it } from 'vitest';
import { findTextOutsideDomain, textDomainProblem } from '../src/foundation/text-domain.js';

describe('the text domain', () => {
  it('takes well-formed text, surrogate pairs (emoji) and curly quotes included', () => {
    for (const text of ['', 'plain', 'Ann’s “trip” 🇵🇹 to Lisbon 😀', '😀'.repeat(1000), 'ü'.repeat(5000)]) {
      expect(textDomainProblem(text)).toBeUndefined();
    }
  });

  it('finds a lone high or low surrogate, or a pair in the wrong order, and says where', () => {
    expect(textDomainProblem('ab\uD800')).toMatch(/unpaired UTF-16 surrogate at index 2/);
    expect(textDomainProblem('\uDC00ab')).toMatch(/at index 0/);
    expect(textDomainProblem('x\uDC00\uD800y')).toMatch(/at index 1/);
    expect(textDomainProblem(`${'😀'.repeat(100)}\uD83D`)).toMatch(/at index 200/);
  });

  it('refuses NUL', () => {
    expect(textDomainProblem('a\u0000b')).toMatch(/U\+0000 \(NUL\) at index 1/);
  });

  it('walks records, keys included, to the first string outside', () => {
    expect(findTextOutsideDomain({ a: ['ok', { b: 'fine 😀' }] })).toBeUndefined();
    expect(findTextOutsideDomain({ a: ['ok', { b: 'bad \uD800' }] })?.path).toBe('a.1.b');
    expect(findTextOutsideDomain({ ['k\uDC00']: 1 })?.problem).toMatch(/its key/);
  });
});
