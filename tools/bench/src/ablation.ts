import type { Analyzer, LexicalIndexOptions } from '@kioku/core';
import { stopwords as snowball } from '@orama/stopwords/english';
import { stemmer } from 'stemmer';
import { eng } from 'stopword';
import porter2 from 'wink-porter2-stemmer';
import { type Engine, kiokuEngine } from './engines.js';
import { MiniSearchLexicalIndex } from './minisearch-lexical-index.js';

/** Kioku's tokenization (lower-case, apostrophes dropped, letters and digits) with another stop list or stemmer. */
function analyzer(stopWords: readonly string[], stem: (word: string) => string): Analyzer {
  const stop = new Set(stopWords.map((w) => w.replace(/['’]/g, '')));
  return {
    terms(text) {
      const out: string[] = [];
      for (const word of text
        .toLowerCase()
        .replace(/['’](?=\p{L})/gu, '')
        .match(/[\p{L}\p{N}]+/gu) ?? []) {
        if (stop.has(word)) continue;
        out.push(word.length > 2 ? stem(word) : word);
      }
      return out;
    },
  };
}

/** Core's ranking, written on MiniSearch instead of core's own inverted index. */
function miniSearchKioku(name: string, options?: LexicalIndexOptions): Engine {
  return {
    name,
    build(units) {
      const index = new MiniSearchLexicalIndex(options);
      for (const unit of units) index.set(unit.id, unit.text);
      return (query, limit) => index.search(query, { limit }).map((hit) => hit.id);
    },
  };
}

/**
 * The variants measured while improving Kioku's lexical recall (`--ablation`): Kioku as it was before
 * (MiniSearch, `stopword`'s 108-word list, BM25+ b=0.75 d=0.5, no feedback), then rows that each
 * change one thing from today's Kioku.
 */
export function ablationEngines(): Engine[] {
  const stopwordEng = analyzer(eng, stemmer);
  return [
    miniSearchKioku('before (MiniSearch, stopword list, b=.75 d=.5, no feedback)', {
      analyzer: stopwordEng,
      bm25: { k1: 1.2, b: 0.75, d: 0.5 },
      feedback: false,
    }),
    kiokuEngine('Kioku without feedback', { feedback: false }),
    kiokuEngine('Kioku with stopword list (108 words)', { analyzer: stopwordEng }),
    kiokuEngine('Kioku without stop words', { analyzer: analyzer([], stemmer) }),
    kiokuEngine('Kioku without stemming', { analyzer: analyzer(snowball, (w) => w) }),
    kiokuEngine('Kioku with Porter2 (wink-porter2)', {
      analyzer: analyzer(snowball, porter2 as (word: string) => string),
    }),
    kiokuEngine('Kioku with BM25 b=.75 d=.5', { bm25: { b: 0.75, d: 0.5 } }),
    kiokuEngine('Kioku, feedback 10 docs 20 terms', { feedback: { docs: 10, terms: 20 } }),
    miniSearchKioku('Kioku ranking on MiniSearch'),
    miniSearchKioku('Kioku ranking on MiniSearch, no feedback', { feedback: false }),
  ];
}
