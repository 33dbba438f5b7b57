import { describe, expect, it } from 'vitest';
import { englishAnalyzer, LexicalIndex } from '../src/adapter.js';

describe('English analyzer', () => {
  it('lower-cases, drops stop words and stems so inflections match', () => {
    const terms = englishAnalyzer.terms('The user is running the tests');
    expect(terms).not.toContain('the');
    expect(englishAnalyzer.terms('running')).toEqual(englishAnalyzer.terms('runs'));
    expect(terms.every((t) => t === t.toLowerCase())).toBe(true);
  });

  it('splits on punctuation and keeps digits and non-Latin letters', () => {
    expect(englishAnalyzer.terms('UTC-6, America/Chicago')).toEqual(
      expect.arrayContaining(['utc', '6', ...englishAnalyzer.terms('america chicago')]),
    );
    expect(englishAnalyzer.terms('記憶 memory').length).toBe(2);
  });
});

describe('LexicalIndex', () => {
  const index = new LexicalIndex();
  index.set('tz', 'User is in Chicago (America/Chicago, UTC-6)');
  index.set('editor', 'User prefers vim keybindings in every editor');
  index.set('food', 'User is vegetarian and dislikes mushrooms');

  it('ranks the relevant text first', () => {
    expect(index.search('which timezone is Chicago')[0]?.id).toBe('tz');
    expect(index.search('editor keybindings')[0]?.id).toBe('editor');
  });

  it('returns nothing for a query made only of stop words', () => {
    expect(index.search('the and of')).toEqual([]);
  });

  it('replaces and removes entries incrementally', () => {
    const local = new LexicalIndex();
    local.set('a', 'apples and pears');
    local.set('a', 'bananas');
    expect(local.search('apples')).toEqual([]);
    expect(local.search('bananas')[0]?.id).toBe('a');
    local.remove('a');
    local.remove('missing');
    expect(local.size).toBe(0);
  });

  it('applies the filter before the limit', () => {
    const hits = index.search('user', { limit: 1, filter: (id) => id === 'food' });
    expect(hits.map((h) => h.id)).toEqual(['food']);
  });
});
