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

  it('evicts in the same order as a plain least-recently-used list over many mixed operations', () => {
    // The reference: an array, least recent first, with the cache's documented shortcut (an entry read
    // among the most recent eighth stays where it is).
    const maxEntries = 50;
    const cache = new SizedLru<number>({ maxSize: 400, maxEntries, sizeOf: (value) => value });
    let reference: { key: string; size: number; stamp: number }[] = [];
    let clock = 0;
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % n;
    };
    for (let step = 0; step < 20_000; step++) {
      const key = `k${random(120)}`;
      const at = reference.findIndex((e) => e.key === key);
      if (random(3) === 0) {
        expect(cache.get(key)).toBe(at === -1 ? undefined : reference[at]!.size);
        const entry = reference[at];
        if (entry && clock - entry.stamp > reference.length >>> 3) {
          entry.stamp = ++clock;
          reference = [...reference.slice(0, at), ...reference.slice(at + 1), entry];
        }
      } else {
        // Sizes up to 60 against a budget of 400: a set evicts none, one or several entries.
        const size = 1 + random(60);
        reference = [...reference.filter((e) => e.key !== key), { key, size, stamp: ++clock }];
        let total = reference.reduce((n, e) => n + e.size, 0);
        while (total > 400 || reference.length > maxEntries) total -= reference.shift()!.size;
        cache.set(key, size);
      }
      expect(cache.size).toBe(reference.reduce((n, e) => n + e.size, 0));
    }
  });
});
