/**
 * A least-recently-used map bounded by a total size and an entry count: what the memoized tokenizer keeps
 * its counts and cuts in. A Map already iterates in insertion order, so moving an entry to the end on a
 * read makes the first key the least recently used. A read of an entry among the most recent eighth (by
 * when it was last set or moved) leaves it in place: moving it is a delete and a set, each hashing and
 * comparing the key (a whole prompt block for the tokenizer), and such an entry is far from eviction. Hand-written instead of lru-cache (3.6 MB installed for
 * this one use; core's install budget is 15 MB); pinned by test/sized-lru.test.ts.
 */
export class SizedLru<V> {
  readonly #entries = new Map<string, { value: V; size: number; stamp: number }>();
  /** Counts sets and moves: an entry's `stamp` is the clock when it last went to the end. */
  #clock = 0;
  readonly #maxSize: number;
  readonly #maxEntries: number;
  readonly #sizeOf: (value: V, key: string) => number;
  #size = 0;
  /**
   * Where eviction goes on: a live iterator over the entries, whose every entry before it was evicted (or
   * moved to the end). A new iterator for each eviction would skip every deleted slot at the front of the
   * map's table again, which grew with the table until it was compacted (an eighth of a turn's CPU).
   */
  #oldest: IterableIterator<[string, { value: V; size: number; stamp: number }]> | undefined;

  constructor(options: { maxSize: number; maxEntries: number; sizeOf: (value: V, key: string) => number }) {
    this.#maxSize = options.maxSize;
    this.#maxEntries = options.maxEntries;
    this.#sizeOf = options.sizeOf;
  }

  get size(): number {
    return this.#size;
  }

  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (this.#clock - entry.stamp > this.#entries.size >>> 3) {
      this.#entries.delete(key);
      entry.stamp = ++this.#clock;
      this.#entries.set(key, entry);
    }
    return entry.value;
  }

  /** Stores `value` as the most recent entry; an entry larger than the whole budget is not kept. */
  set(key: string, value: V): void {
    const size = this.#sizeOf(value, key);
    const previous = this.#entries.get(key);
    if (previous) {
      this.#entries.delete(key);
      this.#size -= previous.size;
    }
    if (size > this.#maxSize) return;
    this.#entries.set(key, { value, size, stamp: ++this.#clock });
    this.#size += size;
    while (this.#size > this.#maxSize || this.#entries.size > this.#maxEntries) {
      this.#oldest ??= this.#entries.entries();
      const next = this.#oldest.next();
      if (next.done) {
        // Every entry it had was evicted: start again from the first.
        this.#oldest = undefined;
        continue;
      }
      const [oldest, entry] = next.value;
      this.#entries.delete(oldest);
      this.#size -= entry.size;
    }
  }
}
