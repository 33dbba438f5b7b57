import { z } from 'zod';
import { isKiokuError } from '../../foundation/errors.js';
import { parseJsonOrUndefined } from '../../foundation/json.js';
import { retryOnConflict } from '../../foundation/retry-on-conflict.js';
import type { Scope } from '../../foundation/scope.js';
import { MAX_TTL_MS } from '../../store/working/record.js';
import { RESERVED_KEY_ROOT } from '../../store/working/reserved.js';
import type { WorkingMemoryStore } from '../../store/working/store.js';

/**
 * Which users have background work waiting, so that a worker over the whole store finds them without
 * reading every user's data. A hint only: the work itself is what the transcripts hold past the
 * extraction watermarks, so a lost entry delays work (until the user's next turn, or a `runPending` that
 * names the user) and never loses it.
 *
 * Kept in working memory under a partition of its own (`PENDING_INDEX_SCOPE`, a user id no app gives
 * out), one entry per user + agent (`kioku/<userId>/all` or `kioku/<userId>/agent/<agentId>`: a namespace
 * per user, so no namespace cap evicts one user for another) listing the sessions with work. Every change
 * is a compare-and-set on that entry. Entries live 30 days, the longest working-memory TTL, renewed
 * while work keeps coming.
 */
export const PENDING_INDEX_SCOPE: Readonly<Scope> = Object.freeze({ userId: '_kioku.pending' });

const EntrySchema = z.object({ sessions: z.array(z.string()) });
/** Renew an entry that a note finds with less time left than this. */
const RENEW_BELOW_MS = MAX_TTL_MS / 2;

/** A user (+ agent) with work waiting, and the sessions it is in. */
export interface PendingUser {
  scope: Scope;
  sessions: string[];
}

export class PendingIndex {
  readonly #working: WorkingMemoryStore;

  constructor(working: WorkingMemoryStore) {
    this.#working = working;
  }

  /** Note that `sessionId` of the scope's user has work waiting (one read; a write only when new). */
  async note(scope: Scope, sessionId: string): Promise<void> {
    const key = keyOf(scope);
    await retryOnConflict(async () => {
      const entry = await this.#working.get(PENDING_INDEX_SCOPE, key);
      const sessions = entry ? parseSessions(entry.value) : [];
      const renew = entry && Date.parse(entry.expiresAt) - Date.now() < RENEW_BELOW_MS;
      if (sessions.includes(sessionId) && !renew) return;
      if (!sessions.includes(sessionId)) sessions.push(sessionId);
      await this.#working.set(PENDING_INDEX_SCOPE, key, JSON.stringify({ sessions }), {
        ttlMs: MAX_TTL_MS,
        expectedVersion: entry?.version ?? 0,
      });
    });
  }

  /** Take `sessionId` off the scope's list (the entry goes with its last session). */
  async done(scope: Scope, sessionId: string): Promise<void> {
    const key = keyOf(scope);
    await retryOnConflict(async () => {
      const entry = await this.#working.get(PENDING_INDEX_SCOPE, key);
      if (!entry) return;
      const sessions = parseSessions(entry.value).filter((id) => id !== sessionId);
      if (sessions.length === 0) {
        await this.#working.delete(PENDING_INDEX_SCOPE, key, { expectedVersion: entry.version });
      } else {
        await this.#working.set(PENDING_INDEX_SCOPE, key, JSON.stringify({ sessions }), {
          ttlMs: MAX_TTL_MS,
          expectedVersion: entry.version,
        });
      }
    });
  }

  /** The sessions noted for the scope's user (+ agent). */
  async sessions(scope: Scope): Promise<string[]> {
    const entry = await this.#working.get(PENDING_INDEX_SCOPE, keyOf(scope));
    return entry ? parseSessions(entry.value) : [];
  }

  /** Every user (+ agent) noted, the longest waiting first. */
  async users(): Promise<Scope[]> {
    const entries = await this.#working.list(PENDING_INDEX_SCOPE, RESERVED_KEY_ROOT);
    return entries.flatMap((e) => {
      const scope = scopeOf(e.key);
      return scope ? [scope] : [];
    });
  }

  /** Forget the user's entries (every agent): their data is being erased. */
  async forgetUser(userId: string): Promise<void> {
    for (const entry of await this.#working.list(PENDING_INDEX_SCOPE, `${RESERVED_KEY_ROOT}/${userId}`)) {
      await this.#working.delete(PENDING_INDEX_SCOPE, entry.key).catch((error: unknown) => {
        if (!isKiokuError(error, 'CONFLICT')) throw error;
      });
    }
  }
}

function keyOf(scope: Scope): string {
  return scope.agentId === undefined
    ? `${RESERVED_KEY_ROOT}/${scope.userId}/all`
    : `${RESERVED_KEY_ROOT}/${scope.userId}/agent/${scope.agentId}`;
}

function scopeOf(key: string): Scope | undefined {
  const [, userId, kind, agentId] = key.split('/');
  if (!userId) return undefined;
  if (kind === 'all') return { userId };
  if (kind === 'agent' && agentId) return { userId, agentId };
  return undefined;
}

function parseSessions(value: string): string[] {
  const parsed = EntrySchema.safeParse(parseJsonOrUndefined(value));
  return parsed.success ? [...new Set(parsed.data.sessions)] : [];
}
