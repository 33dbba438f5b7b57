import { LexicalIndex, type LexicalIndexState } from '@kioku/core/adapter';
import { searchAnalyzer } from './analysis.js';

/** A partition's analysed terms as one row per fact, in insertion order (`seq`). */
export interface TermsRow {
  id: string;
  terms: string | null;
  length: number | null;
}

interface Entry {
  /** Moved on by `advance`. */
  revision: string;
  index: LexicalIndex;
  facts: number;
}

/**
 * Per-process copies of small fact partitions as core's LexicalIndex, each kept with the partition's
 * revision (`FactStore.revision`, which every write by any process moves on): a search whose partition
 * is unchanged ranks in memory after one statement that reads the revision, instead of reading every
 * fact's terms again (a turn's most expensive statement, on the server and in Node). The index holds the
 * analysed terms only (no text), built without the analyzer from `facts.search_terms`, and ranks exactly as
 * core does (its ranking is core's). Least recently searched partitions go first past `capacity` facts.
 */
export class FactIndexCache {
  readonly capacity: number;
  readonly #entries = new Map<string, Entry>();
  #facts = 0;

  constructor(capacity: number) {
    this.capacity = capacity;
  }

  /** The partition's index at `revision`, when this process has it. */
  get(key: string, revision: string): LexicalIndex | undefined {
    const entry = this.#entries.get(key);
    if (!entry || entry.revision !== revision) return undefined;
    this.#entries.delete(key); // most recently used last
    this.#entries.set(key, entry);
    return entry.index;
  }

  /** The revision this process holds the partition at ('' when it holds none). */
  revisionOf(key: string): string {
    return this.#entries.get(key)?.revision ?? '';
  }

  /** Index the partition's rows (read at `revision`) and keep it, unless it alone exceeds the capacity. */
  put(key: string, revision: string, rows: readonly TermsRow[]): LexicalIndex {
    const index = LexicalIndex.fromState(stateOf(rows), { analyzer: searchAnalyzer });
    this.#drop(key);
    if (rows.length <= this.capacity) {
      this.#entries.set(key, { revision, index, facts: rows.length });
      this.#facts += rows.length;
      for (const [oldest] of this.#entries) {
        if (this.#facts <= this.capacity) break;
        this.#drop(oldest);
      }
    }
    return index;
  }

  /**
   * Move the partition's index from revision `from` to `to` with the rows written in between: `changed` are
   * the ids written or deleted since `from` (the `changes` of `fact_revisions`), `rows` those of them still
   * there, as read at `to`. Undefined when this process no longer holds the index at `from` (another search
   * moved it), or when a fact was deleted: the index is then read again whole, so its texts stay in the
   * partition's order, which ties are broken by (a removal frees a place that the next fact would take).
   */
  advance(
    key: string,
    from: string,
    to: string,
    changed: readonly string[],
    rows: readonly TermsRow[],
  ): LexicalIndex | undefined {
    const entry = this.#entries.get(key);
    if (!entry || entry.revision !== from) return undefined;
    const present = new Set(rows.map((row) => row.id));
    if (changed.some((id) => !present.has(id) && entry.index.has(id))) return undefined;
    for (const row of rows) {
      const terms = row.terms ? row.terms.split(' ') : [];
      entry.index.setTerms(row.id, terms, row.length ?? terms.length);
    }
    this.#entries.delete(key); // most recently used last
    this.#entries.set(key, entry);
    entry.revision = to;
    this.#facts += entry.index.size - entry.facts;
    entry.facts = entry.index.size;
    const index = entry.index;
    for (const [oldest] of this.#entries) {
      if (this.#facts <= this.capacity) break;
      this.#drop(oldest);
    }
    return index;
  }

  #drop(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    this.#facts -= entry.facts;
  }
}

/**
 * The index state of the rows: each fact's distinct terms in order of first occurrence with their counts
 * (what `LexicalIndex.set` would make of its text), so feedback terms tie as core's do.
 */
function stateOf(rows: readonly TermsRow[]): LexicalIndexState {
  const termNumber = new Map<string, number>();
  const ids: string[] = [];
  const docs: number[] = [];
  const counts = new Map<number, number>();
  for (const row of rows) {
    ids.push(row.id);
    counts.clear();
    const terms = row.terms ? row.terms.split(' ') : [];
    for (const term of terms) {
      let n = termNumber.get(term);
      if (n === undefined) {
        n = termNumber.size;
        termNumber.set(term, n);
      }
      counts.set(n, (counts.get(n) ?? 0) + 1);
    }
    docs.push(row.length ?? terms.length, counts.size);
    for (const [n, tf] of counts) docs.push(n, tf);
  }
  return { format: 'kioku.lexical-index', version: 1, terms: [...termNumber.keys()], ids, docs };
}
