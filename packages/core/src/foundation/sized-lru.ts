/**
 * A least-recently-used map bounded by a total size and an entry count: what the memoized tokenizer keeps
 * its counts and cuts in. A Map already iterates in insertion order, so moving an entry to the end on every
 * read makes the first key the least recently used. Hand-written instead of lru-cache (3.6 MB installed for
 * this one use; core's install budget is 15 MB); pinned by test/sized-lru.test.ts.
 */
export class SizedLru<V> {
  readonly #entries = new Map<string, { value: V; size: number }>();
  readonly #maxSize: number;
  readonly #maxEntries: number;
  readonly #sizeOf: (value: V, key: string) => number;
  #size = 0;

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
    this.#entries.delete(key);
    this.#entries.set(key, entry);
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
    this.#entries.set(key, { value, size });
    this.#size += size;
    for (const [oldest, entry] of this.#entries) {
      if (this.#size <= this.#maxSize && this.#entries.size <= this.#maxEntries) break;
      this.#entries.delete(oldest);
      this.#size -= entry.size;
    }
  }
}
