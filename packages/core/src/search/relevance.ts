import { SizedLru } from '../foundation/sized-lru.js';
import { englishAnalyzer } from './analyzer.js';

/**
 * Analysed texts by text: the memory manager measures the coverage of the same stored memories turn after
 * turn, and stemming them again was a tenth of a turn in the turn bench. Bounded by characters and entries.
 */
const analysed = new SizedLru<ReadonlySet<string>>({
  maxSize: 2_000_000,
  maxEntries: 20_000,
  sizeOf: (_terms, text) => text.length,
});

function termsOf(text: string): ReadonlySet<string> {
  let terms = analysed.get(text);
  if (!terms) {
    terms = new Set(englishAnalyzer.terms(text));
    analysed.set(text, terms);
  }
  return terms;
}

/** The distinct analyzed terms of a query (stop words dropped, stemmed), as the lexical index sees them. */
export function queryTerms(query: string): ReadonlySet<string> {
  return new Set(englishAnalyzer.terms(query));
}

/** The share (0–1) of the query's terms that occur in `text`. */
export function coverage(terms: ReadonlySet<string>, text: string): number {
  if (terms.size === 0) return 0;
  return share(terms, termsOf(text));
}

/**
 * Analysed terms by stored record. A frozen record (what the in-memory stores hand out, the same object
 * turn after turn) cannot change, so its terms are found without building its text again and hashing it
 * as an LRU key; any other record goes by its text.
 */
const analysedRecords = new WeakMap<object, ReadonlySet<string>>();

/** `coverage` of a stored record's searchable text (`textOf`). */
export function recordCoverage<R extends object>(
  terms: ReadonlySet<string>,
  record: R,
  textOf: (record: R) => string,
): number {
  if (terms.size === 0) return 0;
  if (!Object.isFrozen(record)) return share(terms, termsOf(textOf(record)));
  let present = analysedRecords.get(record);
  if (!present) {
    present = termsOf(textOf(record));
    analysedRecords.set(record, present);
  }
  return share(terms, present);
}

function share(terms: ReadonlySet<string>, present: ReadonlySet<string>): number {
  let found = 0;
  for (const term of terms) if (present.has(term)) found++;
  return found / terms.size;
}

/**
 * Relevance in [0, 1] from a lexical hit, so a `relevanceThreshold` meant for a cosine similarity (as
 * vector stores use) means something with BM25, whose raw scores have no fixed scale:
 *
 *   relevance = (score / best score in the same result list + share of query terms the memory contains) / 2
 *
 * The first half ranks a hit against the best one; the second is absolute, so the best hit of a poor
 * match does not get 1.0 just for being first. At the default threshold 0.7 the best hit needs 40% of the
 * query's terms, a hit with half the best score needs 90%.
 */
export function relevance(score: number, bestScore: number, termCoverage: number): number {
  const relative = bestScore > 0 ? Math.min(1, Math.max(0, score / bestScore)) : 0;
  return (relative + termCoverage) / 2;
}
