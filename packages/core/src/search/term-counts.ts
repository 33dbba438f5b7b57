/**
 * The term frequencies of an analysed text stored as its terms joined by single spaces, read lazily. A store
 * that ranks candidates it read (SQLite, PostgreSQL) asks each of hundreds of candidates for the counts of
 * the query's few terms: `get` and `has` find them in the text without allocating, where splitting the
 * text into a map built ~1 KB of garbage per candidate (on PostgreSQL, 1,650 candidates a turn). The map is
 * built on first iteration (the feedback round reads every term of the best few), in order of first
 * occurrence, or after MAP_AFTER_GETS look-ups (a candidate a store keeps and scores search after search).
 */
export class TermCounts implements ReadonlyMap<string, number> {
  readonly #terms: string;
  #map: Map<string, number> | undefined;
  #gets = 0;

  constructor(terms: string) {
    this.#terms = terms;
  }

  get(term: string): number | undefined {
    if (this.#map !== undefined || term === '' || term.includes(' ') || ++this.#gets > MAP_AFTER_GETS)
      return this.#full().get(term);
    const text = this.#terms;
    const end = term.length;
    let count = 0;
    for (let at = text.indexOf(term); at !== -1; at = text.indexOf(term, at + end)) {
      // Whole terms only: "kite" is not in "kites".
      if (
        (at === 0 || text.charCodeAt(at - 1) === SPACE) &&
        (at + end === text.length || text.charCodeAt(at + end) === SPACE)
      )
        count++;
    }
    return count === 0 ? undefined : count;
  }

  has(term: string): boolean {
    return this.get(term) !== undefined;
  }

  get size(): number {
    return this.#full().size;
  }

  forEach(
    callback: (value: number, key: string, map: ReadonlyMap<string, number>) => void,
    thisArg?: unknown,
  ): void {
    for (const [key, value] of this.#full()) callback.call(thisArg, value, key, this);
  }

  entries(): MapIterator<[string, number]> {
    return this.#full().entries();
  }

  keys(): MapIterator<string> {
    return this.#full().keys();
  }

  values(): MapIterator<number> {
    return this.#full().values();
  }

  [Symbol.iterator](): MapIterator<[string, number]> {
    return this.#full()[Symbol.iterator]();
  }

  #full(): Map<string, number> {
    if (this.#map === undefined) {
      this.#map = new Map();
      if (this.#terms)
        for (const term of this.#terms.split(' ')) this.#map.set(term, (this.#map.get(term) ?? 0) + 1);
    }
    return this.#map;
  }
}

const SPACE = 32;
/** Look-ups by scanning before the map is built: about two searches' worth of query terms. */
const MAP_AFTER_GETS = 48;
