import type { Scope } from '../../foundation/scope.js';
import type { PendingSession } from '../../store/sessions/record.js';
import type { SessionStore } from '../../store/sessions/store.js';

/**
 * Which users have background work waiting, read from the session store: a conversation with extraction
 * appends each turn with `pending: true`, which marks its session pending in the same atomic step as the
 * append (`SessionStore.transcriptAppend`), so a worker over the whole store finds every acknowledged turn
 * without reading every user's data, and no process can die between storing a turn and announcing it.
 * The work itself is what the transcripts hold past the extraction watermarks; a drain that finds nothing
 * left clears the session at the mark it read, so a turn appended meanwhile keeps it pending.
 */
export class PendingIndex {
  readonly #sessions: SessionStore;

  constructor(sessions: SessionStore) {
    this.#sessions = sessions;
  }

  /**
   * Every user (+ agent) with a pending session, the longest waiting first, from the oldest `limit`
   * pending sessions (the rest are listed once those are drained).
   */
  async users(limit?: number): Promise<Scope[]> {
    const users = new Map<string, Scope>();
    for (const p of await this.#sessions.listPending(limit === undefined ? {} : { limit })) {
      const key = `${p.userId}\u0000${p.agentId ?? ''}`;
      if (!users.has(key)) users.set(key, scopeOf(p));
    }
    return [...users.values()];
  }

  /** The scope's user's (+ agent's) pending sessions, the longest waiting first. */
  async sessions(scope: Scope): Promise<PendingSession[]> {
    return this.#sessions.listPending({ scope: { userId: scope.userId, agentId: scope.agentId } });
  }

  /** The session's pending mark, undefined when it is not pending. */
  async mark(scope: Scope, sessionId: string): Promise<number | undefined> {
    const id = sessionId.toLowerCase();
    return (await this.sessions(scope)).find((p) => p.sessionId.toLowerCase() === id)?.mark;
  }

  /** Clear the session if nothing was appended since `mark` was read; false when something was. */
  done(scope: Scope, sessionId: string, mark: number): Promise<boolean> {
    return this.#sessions.clearPending(scope, sessionId, mark);
  }
}

function scopeOf(p: PendingSession): Scope {
  return { userId: p.userId, ...(p.agentId === undefined ? {} : { agentId: p.agentId }) };
}
