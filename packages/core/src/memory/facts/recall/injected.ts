import { z } from 'zod';
import type { Scope } from '../../../foundation/scope.js';
import type { SessionStore } from '../../../store/sessions/store.js';
import { updateKvValue } from '../../../store/sessions/update-value.js';

/** Session k-v key holding the ids already recalled into the session (a JSON array). */
export const RECALL_INJECTED_KEY = 'kioku.recall.injected';

/** Ids kept per session, newest last; about 150 KB, far below the k-v value limit. */
const MAX_TRACKED_IDS = 10_000;

const IdsSchema = z.array(z.string());

/** A stored value with its ids; `canonical` when it is exactly `JSON.stringify` of them in order. */
interface Parsed {
  raw: string;
  ids: Set<string>;
  canonical: boolean;
  /** Ids `raw` holds that `ids` does not yet: added to `ids` once `raw` is stored (see `add`). */
  pending?: string[];
}

/**
 * The facts recalled in each session, persisted in the session's k-v store so that delta injection survives
 * a process restart and a resumed Conversation. `add` writes with the version it read (and reads again on
 * CONFLICT), so turns of one session served at once by two app instances both keep what they recalled.
 */
export class InjectedMemoryTracker {
  readonly #sessions: SessionStore;
  /**
   * The last value parsed and its ids. The list is read on every turn (and again when it is added to)
   * and grows by up to `maxResults` ids a turn; validating thousands of ids each time showed in the
   * turn bench. The same string parses to the same ids, so an unchanged value is not parsed again.
   */
  #last: Parsed | undefined;

  constructor(sessions: SessionStore) {
    this.#sessions = sessions;
  }

  /** The session's recalled ids; the set may grow when this tracker adds to the same list later. */
  async load(scope: Readonly<Scope>, sessionId: string): Promise<ReadonlySet<string>> {
    const entry = await this.#sessions.kvGet(scope, sessionId, RECALL_INJECTED_KEY);
    return this.#parse(entry?.value);
  }

  async add(scope: Readonly<Scope>, sessionId: string, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    // What this call wrote, so the next turn's read of it needs no parse.
    let next: Parsed | undefined;
    const written = await updateKvValue(this.#sessions, scope, sessionId, RECALL_INJECTED_KEY, (current) => {
      const appended = this.#append(current?.value, ids);
      if (appended !== undefined) {
        next = appended ?? undefined;
        return appended ? appended.raw : null;
      }
      const all = new Set(this.#parse(current?.value));
      const known = all.size;
      for (const id of ids) all.add(id);
      if (all.size === known) return null; // the stored list has every id already
      const kept = [...all].slice(-MAX_TRACKED_IDS);
      next = { raw: JSON.stringify(kept), ids: new Set(kept), canonical: true };
      return next.raw;
    });
    if (written && next?.raw === written.value) {
      // Only now that the value is stored do its new ids join the set (a retried write may not have been it).
      for (const id of next.pending ?? []) next.ids.add(id);
      this.#last = { raw: next.raw, ids: next.ids, canonical: next.canonical };
    }
  }

  /** The ids of a stored value; an unreadable one is none (it only costs re-injecting; `add` rewrites it). */
  #parse(raw: string | undefined): ReadonlySet<string> {
    if (raw === undefined) return new Set();
    if (this.#last?.raw === raw) return this.#last.ids;
    let ids: string[] = [];
    try {
      const parsed = IdsSchema.safeParse(JSON.parse(raw));
      if (parsed.success) ids = parsed.data;
    } catch {
      // ids stays empty
    }
    const set = new Set(ids);
    this.#last = { raw, ids: set, canonical: JSON.stringify([...set]) === raw };
    return this.#last.ids;
  }

  /**
   * The common case of `add` without building the whole list again: the stored value is the one parsed or
   * written last, in the form `add` writes (`JSON.stringify` of the ids), and the new ids fit under the cap.
   * Then the new value is the old one with the new ids' JSON appended, byte for byte what the full rebuild
   * writes. Null: nothing to write (every id is known); undefined: this case does not apply.
   */
  #append(raw: string | undefined, ids: readonly string[]): Parsed | null | undefined {
    const last = this.#last;
    if (raw === undefined || last?.raw !== raw || !last.canonical) return undefined;
    const added = new Set<string>();
    for (const id of ids) if (!last.ids.has(id)) added.add(id);
    if (added.size === 0) return null;
    if (last.ids.size + added.size > MAX_TRACKED_IDS) return undefined;
    const tail = JSON.stringify([...added]);
    return {
      raw: last.ids.size === 0 ? tail : `${raw.slice(0, -1)},${tail.slice(1)}`,
      ids: last.ids,
      canonical: true,
      pending: [...added],
    };
  }
}
