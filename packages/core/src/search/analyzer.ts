import { stemmer } from 'stemmer';
import { eng } from 'stopword';

/** Turns text into index terms. The same analyzer must be used for documents and queries. */
export interface Analyzer {
  /** Terms of `text`, in order, duplicates kept (term frequency matters for BM25). */
  terms(text: string): string[];
}

const STOP_WORDS = new Set(eng);
// Letters (any script) and digits; everything else separates words. Apostrophes inside words are
// dropped first so "don't" → "dont" and "user's" → "users".
const WORD = /[\p{L}\p{N}]+/gu;
const APOSTROPHE = /['’](?=\p{L})/gu;

/**
 * English analysis: lower-case, split on non-alphanumerics, drop stop words, Porter-stem.
 * Porter stemming comes from `stemmer` and the stop-word list from `stopword` (both well kept).
 */
export const englishAnalyzer: Analyzer = {
  terms(text) {
    const out: string[] = [];
    const words = text.toLowerCase().replace(APOSTROPHE, '').match(WORD);
    if (!words) return out;
    for (const word of words) {
      if (STOP_WORDS.has(word)) continue;
      out.push(word.length > 2 ? stemmer(word) : word);
    }
    return out;
  },
};
