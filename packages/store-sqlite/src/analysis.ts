import { createHash } from 'node:crypto';
import { englishAnalyzer } from '@kioku/core/adapter';

/**
 * What is indexed is core's analysis of a record, not its raw text: the FTS5 tables index
 * `search_terms`, the space-separated terms of core's English analyzer (stop words dropped, irregular
 * verbs mapped, Porter stems). Queries go through the same analyzer, so SQLite finds exactly what
 * core's lexical index finds. Measured on LoCoMo, FTS5's own `porter unicode61` on the raw text is
 * 8–10 points of recall behind (no stop list, no verb forms).
 */
export interface Analyzed {
  terms: string;
  length: number;
}

export function analyze(text: string): Analyzed {
  const terms = englishAnalyzer.terms(text);
  return { terms: terms.join(' '), length: terms.length };
}

/** The analyzer's terms of a query, each once, with how often it occurs (its weight). */
export function queryTerms(query: string): Map<string, number> {
  const weights = new Map<string, number>();
  for (const term of englishAnalyzer.terms(query)) weights.set(term, (weights.get(term) ?? 0) + 1);
  return weights;
}

/**
 * Identifies the analyzer's behaviour: its output on a probe text covering stop words, irregular
 * verbs, stemming, digits and non-ASCII letters. When core's analyzer changes, this changes, and
 * `setup()` recomputes every stored `search_terms`.
 */
export const ANALYZER_SIGNATURE = createHash('sha256')
  .update(
    englishAnalyzer
      .terms(
        "The children went running; they've bought 3 ponies at the café's 2nd floor. Didn't she swim, " +
          'ate, flew, studies, relational databases, happily connected GÉANT Ünïcödé 東京 naïve résumé?',
      )
      .join(' '),
  )
  .digest('hex')
  .slice(0, 16);
