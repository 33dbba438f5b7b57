import type { Scope } from '../../foundation/scope.js';
import type { TranscriptEntry } from '../../store/sessions/record.js';
import type { SessionStore } from '../../store/sessions/store.js';

/** The ledger's id for the turns before the read window, never read (`count` of them). */
export const OLDER_TURNS = 'older-turns';

export interface ReadWindow {
  /** The newest entries, holding at least the turns a replay can show. */
  entries: TranscriptEntry[];
  /**
   * True when older entries exist that were not read because the window already held the `maxTurns`
   * newest turns whole; false when the window is the whole transcript or `maxEntries` of it.
   */
  cut: boolean;
}

/**
 * Reads the end of a session's transcript that the replay needs: the newest `maxTurns` turns, whole (a
 * turn starts at a user entry), rather than `maxEntries` entries every turn. The first read asks for
 * about (maxTurns + 1) turns at the entries per turn seen last, and doubles while the window holds fewer
 * user entries than `maxTurns`, up to `maxEntries` (then exactly what a plain read of `maxEntries` gives).
 * The estimate only sizes the read: a wrong one costs another read, never a different replay.
 */
export class ReplayWindow {
  readonly #sessions: SessionStore;
  readonly #maxTurns: number;
  readonly #maxEntries: number;
  /** Entries per turn in the last window read (2 = a user message and its answer). */
  #perTurn = 2;

  constructor(sessions: SessionStore, maxTurns: number, maxEntries: number) {
    this.#sessions = sessions;
    this.#maxTurns = maxTurns;
    this.#maxEntries = maxEntries;
  }

  async read(scope: Readonly<Scope>, sessionId: string): Promise<ReadWindow> {
    let n = Math.min(this.#maxEntries, Math.ceil((this.#maxTurns + 1) * this.#perTurn * 1.25) + 4);
    for (;;) {
      const entries = await this.#sessions.transcriptReadLast(scope, sessionId, n);
      if (entries.length < n || n >= this.#maxEntries) return { entries, cut: false };
      let users = 0;
      let firstUser = -1;
      for (let i = 0; i < entries.length; i++) {
        if (entries[i]!.role !== 'user') continue;
        users++;
        if (firstUser < 0) firstUser = i;
      }
      if (users >= this.#maxTurns) {
        this.#perTurn = Math.max(1, (entries.length - firstUser) / users);
        return { entries, cut: true };
      }
      n = Math.min(this.#maxEntries, n * 2);
    }
  }
}
