/** A record as the model was shown it: its id and the version it had then. */
export interface SeenRecord {
  readonly id: string;
  readonly version: number;
}

/**
 * The version of each record the model has been shown in one conversation (memory blocks, search
 * results). A tool that changes a record the model saw passes that version as `expectedVersion`, so an
 * edit based on what the model read never overwrites a change made since (by another app instance, a
 * background pass or the user) — the store answers CONFLICT instead, and the tool tells the model what
 * the record says now.
 */
export class SeenVersions {
  /** By id: the version last shown, and `#clock` when the id last went to the end of the map. */
  readonly #versions = new Map<string, { version: number; stamp: number }>();
  /** Counts moves to the end of `#versions`. */
  #clock = 0;
  /** Ids noted since `takeNotedFacts` was last called: what the model was shown in the current turn. */
  readonly #noted = new Set<string>();
  /**
   * The oldest sightings, in order: a live iterator that has passed only ids it dropped. A new iterator
   * per drop would step over every deleted slot at the front of the map again (each sighting moves its
   * id to the end), which grew with the map until it was compacted.
   */
  #oldest: Iterator<string> | undefined;

  /** Record what the model was shown last; a later sighting replaces an earlier one. */
  note(record: SeenRecord): void {
    if (this.#noted.size < MAX_SEEN) this.#noted.add(record.id);
    const entry = this.#versions.get(record.id);
    if (entry) {
      entry.version = record.version;
      // A move to the end is a delete and a set; a block shows the same facts turn after turn, and one
      // among the newest eighth of sightings is far from being dropped, so it stays where it is.
      if (this.#clock - entry.stamp > MAX_SEEN >>> 3) {
        this.#versions.delete(record.id);
        entry.stamp = ++this.#clock;
        this.#versions.set(record.id, entry);
      }
      return;
    }
    // Bounded: a long conversation must not grow this without end (oldest sightings go first).
    if (this.#versions.size >= MAX_SEEN) {
      this.#oldest ??= this.#versions.keys();
      let next = this.#oldest.next();
      if (next.done) {
        this.#oldest = this.#versions.keys();
        next = this.#oldest.next();
      }
      if (!next.done) this.#versions.delete(next.value);
    }
    this.#versions.set(record.id, { version: record.version, stamp: ++this.#clock });
  }

  /** The version the model was last shown, or undefined when it has not seen the record. */
  versionOf(id: string): number | undefined {
    return this.#versions.get(id)?.version;
  }

  /** Forget a record (deleted). */
  forget(id: string): void {
    this.#versions.delete(id);
    this.#noted.delete(id);
  }

  /** The facts noted since the last call (those the model was shown this turn), oldest first. */
  takeNotedFacts(): string[] {
    const ids = [...this.#noted].filter(isFactId);
    this.#noted.clear();
    return ids;
  }
}

const MAX_SEEN = 10_000;

/**
 * Facts are noted under their id; other records under a kind prefix (`plan/<thread>`, `working/<key>`).
 * Record ids never contain `/` (`IdSchema`), so the two cannot collide.
 */
function isFactId(id: string): boolean {
  return !id.includes('/');
}
