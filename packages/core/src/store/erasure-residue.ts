/**
 * A place of a backend's own, outside the records a snapshot reads, that still holds something of an erased
 * user: a statistics row, an index entry, a cache key. `count` is how many entries are left there.
 */
export interface ErasureResidue {
  /** The backend's name for the place (`fact_terms`, a key pattern, …). */
  place: string;
  count: number;
}

/**
 * What a store may add to its contract so that erasure is checked where the data really lives: the places
 * its backend derives from a user's records (statistics tables, search indexes, caches), read directly.
 * `verifyErased` calls it after the snapshots; a store without such places leaves it out.
 */
export interface ErasureResidueReader {
  /** Entries of `userId` left in the backend's derived places; empty when there are none. */
  erasureResidue?(userId: string): Promise<ErasureResidue[]>;
}
