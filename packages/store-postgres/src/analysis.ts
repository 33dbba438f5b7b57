import type { Fact } from '@kioku/core';
import { type Analyzer, englishAnalyzer, factSearchText } from '@kioku/core/adapter';
import { SEARCH_TEXT_CHARS } from './schema.js';

/**
 * Characters of a term that are stored and matched: a GIN key holds at most ~2,700 bytes, and a word that
 * long (4 bytes a character at most) is matched by its start. Queries are cut the same way.
 */
const TERM_CHARS = 200;

const terms = (text: string) =>
  englishAnalyzer.terms(text).map((term) => (term.length > TERM_CHARS ? term.slice(0, TERM_CHARS) : term));

/** Core's English analyzer with terms cut as stored: what a search's query is analysed with. */
export const searchAnalyzer: Analyzer = { terms };

/**
 * What a fact is searched by: core's English analysis of `factSearchText` (stop words dropped, irregular
 * verbs mapped, Porter stems), computed here because the analyzer is TypeScript. Stored space-separated in
 * `facts.search_terms` with its length; queries go through the same analyzer, so PostgreSQL finds and ranks
 * what core's lexical index would. tsvector's `english` configuration is 8 points of recall behind on LoCoMo
 * (no irregular verbs, a different stop list, and `ts_rank` has no idf).
 */
export interface Analyzed {
  searchTerms: string;
  searchLength: number;
}

/** A fact's terms; of a text over SEARCH_TEXT_CHARS characters (2 MiB content), its start is searchable. */
export function analyzeFact(fact: Pick<Fact, 'title' | 'content' | 'tags' | 'category'>): Analyzed {
  const found = terms(factSearchText(fact).slice(0, SEARCH_TEXT_CHARS));
  return { searchTerms: found.join(' '), searchLength: found.length };
}

/** The analyzer's terms of a query, each once in order, with how often it occurs (its weight). */
export function queryTerms(query: string): Map<string, number> {
  const weights = new Map<string, number>();
  for (const term of terms(query)) weights.set(term, (weights.get(term) ?? 0) + 1);
  return weights;
}
