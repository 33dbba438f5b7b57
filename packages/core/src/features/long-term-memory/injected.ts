import { z } from 'zod';
import type { Scope } from '../../scope.js';
import type { SessionStore } from '../../sessions/store.js';

/** Session k-v key holding the ids already recalled into the session (a JSON array). */
export const RECALL_INJECTED_KEY = 'kioku.recall.injected';

/** Ids kept per session, newest last; about 150 KB, far below the k-v value limit. */
const MAX_TRACKED_IDS = 10_000;

const IdsSchema = z.array(z.string());

/**
 * RockBot's InjectedMemoryTracker, persisted in the session's k-v store so that delta injection survives
 * a process restart and a resumed Conversation.
 */
export class InjectedMemoryTracker {
  readonly #sessions: SessionStore;
  /**
   * The last value parsed and its ids. The list is read on every turn (and again when it is added to)
   * and grows by up to `maxResults` ids a turn; validating thousands of ids each time showed in the
   * turn bench. The same string parses to the same ids, so an unchanged value is not parsed again.
   */
  #last: { raw: string; ids: readonly string[] } | undefined;

  constructor(sessions: SessionStore) {
    this.#sessions = sessions;
  }

  async load(scope: Readonly<Scope>, sessionId: string): Promise<Set<string>> {
    const raw = await this.#sessions.kvGet(scope, sessionId, RECALL_INJECTED_KEY);
    if (raw === null) return new Set();
    if (this.#last?.raw === raw) return new Set(this.#last.ids);
    // An unreadable value only costs re-injecting entries; the next add() rewrites it.
    let ids: string[] = [];
    try {
      const parsed = IdsSchema.safeParse(JSON.parse(raw));
      if (parsed.success) ids = parsed.data;
    } catch {
      // ids stays empty
    }
    this.#last = { raw, ids };
    return new Set(ids);
  }

  async add(scope: Readonly<Scope>, sessionId: string, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    const all = await this.load(scope, sessionId);
    for (const id of ids) all.add(id);
    const kept = [...all].slice(-MAX_TRACKED_IDS);
    const raw = JSON.stringify(kept);
    await this.#sessions.kvSet(scope, sessionId, RECALL_INJECTED_KEY, raw);
    this.#last = { raw, ids: kept };
  }
}
