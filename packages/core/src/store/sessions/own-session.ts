import { isKiokuError } from '../../foundation/errors.js';
import type { Scope } from '../../foundation/scope.js';
import { KIOKU_SESSION_KEY } from './kioku-sessions.js';
import type { SessionInfo } from './record.js';
import type { SessionStore } from './store.js';

/** What a dedicated session is for; one session per purpose, so one purpose's keys never evict another's. */
export type OwnSessionPurpose =
  | 'changesets'
  | 'feedback'
  | 'conversation-log'
  | 'recall-log'
  | 'suppressions'
  | 'extraction'
  | 'enrichment';

/**
 * One dedicated session per user + agent for one of Kioku's own purposes, found by its metadata
 * (`{ kioku: purpose }`) and created on the first write. Its key-value map is the durable place: every
 * backend has a session store, partitioned by user + agent and snapshotted with the user's data.
 */
export class OwnSession {
  readonly sessions: SessionStore;
  readonly #purpose: OwnSessionPurpose;
  readonly #title: string;
  readonly #ids = new Map<string, string>();

  constructor(sessions: SessionStore, purpose: OwnSessionPurpose, title: string) {
    this.sessions = sessions;
    this.#purpose = purpose;
    this.#title = title;
  }

  /** True for this purpose's session. */
  is(session: Pick<SessionInfo, 'metadata'>): boolean {
    return session.metadata[KIOKU_SESSION_KEY] === this.#purpose;
  }

  /**
   * `write` in the session (created when there is none); once more in a new one when the session was
   * deleted since it was found (the user's data forgotten, say).
   */
  async write<T>(scope: Scope, write: (sessionId: string, scope: Scope) => Promise<T>): Promise<T> {
    const s = baseScope(scope);
    try {
      return await write((await this.#find(s, true))!, s);
    } catch (error) {
      if (!isKiokuError(error, 'NOT_FOUND')) throw error;
      this.#ids.clear();
      return write((await this.#find(s, true))!, s);
    }
  }

  /** `read` in the session, or `missing` when there is none (never created, or deleted meanwhile). */
  async read<T>(scope: Scope, read: (sessionId: string, scope: Scope) => Promise<T>, missing: T): Promise<T> {
    const s = baseScope(scope);
    const sessionId = await this.#find(s, false);
    if (sessionId === undefined) return missing;
    try {
      return await read(sessionId, s);
    } catch (error) {
      if (!isKiokuError(error, 'NOT_FOUND')) throw error;
      this.#ids.clear();
      return missing;
    }
  }

  async #find(s: Scope, create: boolean): Promise<string | undefined> {
    const cacheKey = `${s.userId}\u0000${s.agentId ?? ''}`;
    const cached = this.#ids.get(cacheKey);
    if (cached) return cached;
    let found = (await this.sessions.list(s)).find((x) => this.is(x));
    if (!found && create) {
      const mine = await this.sessions.create(s, {
        storeTypes: [`kioku_${this.#purpose.replace(/-/g, '_')}`],
        title: this.#title,
        metadata: { [KIOKU_SESSION_KEY]: this.#purpose },
      });
      // Two writers may create one each at once: both settle on the oldest and the other is dropped.
      found = (await this.sessions.list(s)).find((x) => this.is(x));
      if (found && found.id !== mine.id) await this.sessions.delete(s, mine.id);
    }
    if (found) this.#ids.set(cacheKey, found.id);
    return found?.id;
  }
}

/**
 * The session holding save_memory's enrichment requests (`memory/enrichment/outbox.ts`); extraction
 * passes over it.
 */
export function enrichmentRequestsSession(sessions: SessionStore): OwnSession {
  return new OwnSession(sessions, 'enrichment', 'Kioku enrichment requests');
}

/** The user + agent part of a scope (the dedicated sessions are not per thread). */
export function baseScope(scope: Scope): Scope {
  return scope.agentId === undefined
    ? { userId: scope.userId }
    : { userId: scope.userId, agentId: scope.agentId };
}
