import type { Fact } from '@kioku/core';
import type { FactStamp } from './fact-search.js';

/** Facts written by this process kept for `advance`, over all partitions (a few per active user). */
const WRITTEN_CAPACITY = 4096;

interface Entry {
  revision: string;
  facts: Map<string, Fact>;
}

/**
 * Per-process copies of the facts a search returned, per partition and kept only while the partition's
 * revision (`FactStore.revision`, which every write by any process moves on) is the one they were read
 * at. Fact recall ranks a small partition in memory (FactIndexCache) and then needs its hits' records:
 * the hits it has read before come from here instead of a statement that reads and parses them again
 * (bench:load, 1,000 facts a user: ~32 records a turn, a turn's costliest statement). Records are frozen,
 * as core's in-memory stores hand theirs out. Least recently searched partitions go first past `capacity`
 * facts.
 */
export class FactRowCache {
  readonly capacity: number;
  readonly #entries = new Map<string, Entry>();
  #facts = 0;
  /**
   * The last facts this process wrote, by partition and id: when a write moves a partition on, the fact as
   * written is its record at the next revision if the version and update time read then are the ones
   * written (a write by anyone counts one more version; a fact deleted and created again under its id
   * starts at version 1 again, at another time). A turn that recalls the exchange the last turn stored
   * reads nothing.
   */
  readonly #written = new Map<string, Map<string, Fact>>();
  #writtenCount = 0;

  constructor(capacity: number) {
    this.capacity = capacity;
  }

  /** The facts of `ids` this process holds for the partition at `revision`, and the ids it lacks. */
  get(
    key: string,
    revision: string,
    ids: readonly string[],
  ): { found: Map<string, Fact>; missing: string[] } {
    const found = new Map<string, Fact>();
    const entry = this.#entries.get(key);
    if (!entry || entry.revision !== revision) return { found, missing: [...ids] };
    this.#entries.delete(key); // most recently used last
    this.#entries.set(key, entry);
    const missing: string[] = [];
    for (const id of ids) {
      const fact = entry.facts.get(id);
      if (fact) found.set(id, fact);
      else missing.push(id);
    }
    return { found, missing };
  }

  /**
   * Keep `facts`, read after the partition was seen at `revision`. One read later than that (a write in
   * between) is kept under the older revision, which the next search no longer matches: it is dropped then.
   */
  put(key: string, revision: string, facts: readonly Fact[]): void {
    if (this.capacity === 0 || facts.length === 0) return;
    let entry = this.#entries.get(key);
    if (entry && entry.revision !== revision) {
      this.#drop(key);
      entry = undefined;
    }
    if (!entry) {
      entry = { revision, facts: new Map() };
      this.#entries.set(key, entry);
    }
    for (const fact of facts) {
      if (!entry.facts.has(fact.id)) this.#facts++;
      entry.facts.set(fact.id, deepFreeze(fact));
    }
    for (const [oldest] of this.#entries) {
      if (this.#facts <= this.capacity) break;
      this.#drop(oldest);
    }
  }

  /**
   * The partition moved from revision `from` to `to` by writes to `changed` only (FactIndexCache.advance):
   * the records held at `from` of other facts are still those at `to`.
   */
  advance(
    key: string,
    from: string,
    to: string,
    changed: readonly string[],
    stamps: ReadonlyMap<string, FactStamp>,
  ): void {
    const entry = this.#entries.get(key);
    if (!entry || entry.revision !== from) return;
    const written = this.#written.get(key);
    for (const id of changed) {
      if (entry.facts.delete(id)) this.#facts--;
      const fact = written?.get(id);
      const stamp = stamps.get(id);
      if (fact && stamp && fact.version === stamp.version && fact.updatedAt === stamp.updatedAt) {
        entry.facts.set(id, fact);
        this.#facts++;
      }
    }
    entry.revision = to;
  }

  /** This process wrote `fact` (created or updated it) in partition `key`; see `#written`. */
  wrote(key: string, fact: Fact): void {
    if (this.capacity === 0) return;
    const facts = this.#written.get(key) ?? new Map<string, Fact>();
    this.#written.delete(key); // most recently written last
    this.#written.set(key, facts);
    if (!facts.delete(fact.id)) this.#writtenCount++;
    facts.set(fact.id, deepFreeze(fact));
    for (const [oldestKey, oldest] of this.#written) {
      if (this.#writtenCount <= WRITTEN_CAPACITY) break;
      const [id] = oldest.keys();
      oldest.delete(id!);
      this.#writtenCount--;
      if (oldest.size === 0) this.#written.delete(oldestKey);
    }
  }

  #drop(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    this.#facts -= entry.facts.size;
  }
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
