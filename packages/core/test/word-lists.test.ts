/// <reference path="../scripts/wink-lexicon.d.ts" />
import { stopwords } from '@orama/stopwords/english';
import { describe, expect, it } from 'vitest';
import verbExceptions from 'wink-lexicon/src/wn-verb-exceptions.js';
import { englishAnalyzer } from '../src/search/analyzer.js';
import { ENGLISH_STOP_WORDS } from '../src/search/data/english-stop-words.js';
import { VERB_EXCEPTIONS } from '../src/search/data/verb-exceptions.js';

// The lists are vendored (scripts/vendor-word-lists.ts) so users do not install 14 MB for 100 KB of words.
describe('vendored word lists', () => {
  it('are exactly the Snowball stop words of @orama/stopwords', () => {
    expect(ENGLISH_STOP_WORDS.split(' ')).toEqual(stopwords);
  });

  it("are exactly wink-lexicon's WordNet verb exceptions", () => {
    const vendored = Object.fromEntries(VERB_EXCEPTIONS.split('\n').map((line) => line.split(' ')));
    expect(vendored).toEqual({ ...verbExceptions });
  });

  it('reach the analyzer: stop words dropped, irregular forms mapped to their base before stemming', () => {
    expect(englishAnalyzer.terms("She bought what she didn't need and went home")).toEqual(
      englishAnalyzer.terms('buy need go home'),
    );
  });
});
