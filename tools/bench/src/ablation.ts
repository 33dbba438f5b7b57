import type { Analyzer, LexicalIndexOptions } from '@kioku/core/adapter';
import { stopwords as snowball } from '@orama/stopwords/english';
import { stemmer } from 'stemmer';
import { eng } from 'stopword';
import verbExceptions from 'wink-lexicon/src/wn-verb-exceptions.js';
import porter2 from 'wink-porter2-stemmer';
import { type Engine, kiokuEngine } from './engines.js';
import { MiniSearchLexicalIndex } from './minisearch-lexical-index.js';

interface AnalyzerVariant {
  stopWords?: readonly string[];
  stem?: (word: string) => string;
  irregularVerbs?: boolean;
}

/**
 * Core's englishAnalyzer rebuilt from its parts (lower-case, apostrophes dropped, letters and digits,
 * Snowball stop list, irregular verbs to base form, Porter stemmer), with one part swapped or left out.
 */
function analyzer({
  stopWords = snowball,
  stem = stemmer,
  irregularVerbs = true,
}: AnalyzerVariant): Analyzer {
  const stop = new Set(stopWords.map((w) => w.replace(/['’]/g, '')));
  return {
    terms(text) {
      const out: string[] = [];
      const words =
        text
          .toLowerCase()
          .replace(/['’](?=\p{L})/gu, '')
          .match(/[\p{L}\p{N}]+/gu) ?? [];
      for (const word of words) {
        if (stop.has(word)) continue;
        const base = irregularVerbs && Object.hasOwn(verbExceptions, word) ? verbExceptions[word]! : word;
        out.push(base.length > 2 ? stem(base) : base);
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
 * The first Kioku-row analyzer variant reproduces core's englishAnalyzer exactly (checked by recall).
 */
export function ablationEngines(): Engine[] {
  return [
    miniSearchKioku('before (MiniSearch, stopword list, b=.75 d=.5, no feedback)', {
      analyzer: analyzer({ stopWords: eng, irregularVerbs: false }),
      bm25: { k1: 1.2, b: 0.75, d: 0.5 },
      feedback: false,
    }),
    kiokuEngine('Kioku without feedback', { feedback: false }),
    kiokuEngine('Kioku without irregular verbs', { analyzer: analyzer({ irregularVerbs: false }) }),
    kiokuEngine('Kioku with stopword list (108 words)', { analyzer: analyzer({ stopWords: eng }) }),
    kiokuEngine('Kioku without stop words', { analyzer: analyzer({ stopWords: [] }) }),
    kiokuEngine('Kioku without stemming', { analyzer: analyzer({ stem: (w) => w }) }),
    kiokuEngine('Kioku with Porter2 (wink-porter2)', { analyzer: analyzer({ stem: porter2 }) }),
    kiokuEngine('Kioku with BM25 b=.75 d=.5', { bm25: { b: 0.75, d: 0.5 } }),
    kiokuEngine('Kioku, feedback 10 docs 20 terms', { feedback: { docs: 10, terms: 20 } }),
    miniSearchKioku('Kioku ranking on MiniSearch'),
    miniSearchKioku('Kioku ranking on MiniSearch, no feedback', { feedback: false }),
  ];
}
