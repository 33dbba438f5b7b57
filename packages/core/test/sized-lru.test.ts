import { describe, expect, it } from 'vitest';
import { SizedLru } from '../src/foundation/sized-lru.js';

const lru = (maxSize: number, maxEntries = 100) =>
  new SizedLru<string>({ maxSize, maxEntries, sizeOf: (value, key) => key.length + value.length });

describe('SizedLru (the memoized tokenizer’s cache)', () => {
  it('evicts the least recently used entries once the size budget is passed', () => {
    const cache = lru(12);
    cache.set('a', 'xxx'); // 4
    cache.set('b', 'xxx'); // 8
    expect(cache.get('a')).toBe('xxx'); // a is now the most recent
    cache.set('c', 'xxx'); // 12
    cache.set('d', 'xxx'); // 16 > 12: b goes (least recently used)
    expect(cache.get('b')).toBeUndefined();
    expect(['a', 'c', 'd'].map((k) => cache.get(k))).toEqual(['xxx', 'xxx', 'xxx']);
    expect(cache.size).toBe(12);
  });

  it('bounds the number of entries, replaces a key in place of its old size, and skips oversized values', () => {
    const cache = lru(1000, 2);
    cache.set('a', '1');
    cache.set('b', '2');
    cache.set('c', '3');
    expect(cache.get('a')).toBeUndefined();
    cache.set('b', '22222');
    expect(cache.size).toBe(2 + 6);
    cache.set('huge', 'x'.repeat(2000));
    expect(cache.get('huge')).toBeUndefined();
    expect(cache.get('c')).toBe('3');
  });

  it('keeps an entry read often while many others come and go', () => {
    const cache = new SizedLru<number>({ maxSize: 1e9, maxEntries: 1000, sizeOf: () => 1 });
    cache.set('hot', 1);
    for (let i = 0; i < 20_000; i++) {
      cache.set(`k${i}`, i);
      if (i % 50 === 0) expect(cache.get('hot')).toBe(1);
    }
    expect(cache.get('k0')).toBeUndefined();
    expect(cache.get('k19999')).toBe(19_999);
  });
});
