import { z } from 'zod';
import { shortId } from '../../../foundation/ids.js';
import { retryOnConflict } from '../../../foundation/retry-on-conflict.js';
import type { Scope } from '../../../foundation/scope.js';
import { SizedLru } from '../../../foundation/sized-lru.js';
import type { SessionStore } from '../../../store/sessions/store.js';

/**
 * Session k-v key holding the ids recalled into the session: a JSON array of the newest ids, or once older
 * ids were sealed, `{"sealed": [chunk keys, oldest first], "ids": [the newest ids]}`.
 */
export const RECALL_INJECTED_KEY = 'kioku.recall.injected';

/** Keys of sealed chunks: this prefix and a random token. Each holds a JSON array of ids, written once. */
export const RECALL_INJECTED_CHUNK_PREFIX = `${RECALL_INJECTED_KEY}/`;

/**
 * Ids the head holds before they are sealed into a chunk (about 16 kB): a turn writes the head, and once
 * in so many ids one chunk, never the session's whole list (which cost a 156 kB write a turn on SQLite at
 * 10,000 ids: 3.2 ms p50, 10 ms p95).
 */
export const HEAD_IDS = 1_000;

/** Sealed chunks kept; the oldest is deleted past this. With the head, the last 10,000 ids or so. */
export const MAX_CHUNKS = 9;

/** Sealed chunks' ids kept in memory across sessions (immutable, so never read twice while kept). */
const CACHED_CHUNK_IDS = 100_000;

const IdsSchema = z.array(z.string());
const HeadSchema = z.union([
  IdsSchema,
  z.object({ sealed: z.array(z.string().startsWith(RECALL_INJECTED_CHUNK_PREFIX)), ids: IdsSchema }).strict(),
]);

/** The head as read: its chunk keys and ids; `canonical` when `raw` is exactly what `serialize` makes of them. */
export interface Head {
  /** Whose head it is (see `sessionCacheKey`): equal values of two sessions are not one set. */
  session: string;
  raw: string | undefined;
  /** The stored entry's version (0: none), which a write of the next head expects. */
  version: number;
  sealed: readonly string[];
  ids: Set<string>;
  canonical: boolean;
}

function serialize(sealed: readonly string[], ids: Iterable<string>): string {
  const list = [...ids];
  return sealed.length === 0 ? JSON.stringify(list) : JSON.stringify({ sealed, ids: list });
}

/** The ids recalled into one session: its sealed chunks' and its head's, oldest first. */
export class RecalledIds implements Iterable<string> {
  readonly #parts: readonly ReadonlySet<string>[];
  /** The head these ids were read from, so the turn's `add` writes the next one without reading it again. */
  readonly head: Head | undefined;

  constructor(parts: readonly ReadonlySet<string>[], head?: Head) {
    this.#parts = parts;
    this.head = head;
  }

  has(id: string): boolean {
    for (const part of this.#parts) if (part.has(id)) return true;
    return false;
  }

  *[Symbol.iterator](): Iterator<string> {
    const seen = new Set<string>();
    for (const part of this.#parts) {
      for (const id of part) {
        if (seen.has(id)) continue;
        seen.add(id);
        yield id;
      }
    }
  }
}

/**
 * The facts recalled in each session, persisted in the session's k-v store so that delta injection survives
 * a process restart and a resumed Conversation. The newest ids are in the head (`RECALL_INJECTED_KEY`);
 * past HEAD_IDS they are sealed into a chunk of their own, written once under a new key before the head
 * that names it, so a turn's write stays small however long the session. Every head write carries the
 * version read (and reads again on CONFLICT), so turns of one session served at once by two app instances
 * both keep what they recalled; a chunk written by an attempt that lost is deleted.
 */
export class InjectedMemoryTracker {
  readonly #sessions: SessionStore;
  /**
   * The last head parsed or written, per session. It is read on every turn (and again when added to); the
   * same string parses to the same ids, so an unchanged head is not parsed again. One per session, not one
   * in all: an app serves many sessions in turn (bench:load, 4 users in one process: every head was parsed
   * and validated again on every turn).
   */
  readonly #heads = new SizedLru<Head>({
    maxSize: CACHED_CHUNK_IDS,
    maxEntries: CACHED_CHUNK_IDS / 100,
    sizeOf: (head) => head.ids.size + 1,
  });
  /** Sealed chunks' ids by session and key. */
  readonly #chunks = new SizedLru<ReadonlySet<string>>({
    maxSize: CACHED_CHUNK_IDS,
    maxEntries: CACHED_CHUNK_IDS / 100,
    sizeOf: (ids) => ids.size + 1,
  });

  constructor(sessions: SessionStore) {
    this.#sessions = sessions;
  }

  /** The session's recalled ids; they may grow when this tracker adds to the same session later. */
  async load(scope: Readonly<Scope>, sessionId: string): Promise<RecalledIds> {
    const session = sessionCacheKey(scope, sessionId);
    const entry = await this.#sessions.kvGet(scope, sessionId, RECALL_INJECTED_KEY);
    return this.#known(scope, sessionId, session, this.#parse(session, entry?.value, entry?.version ?? 0));
  }

  /**
   * Add ids to the session's list. `read`: what this turn's `load` returned; the first attempt writes on top
   * of it with its version instead of reading the head again (a write by another instance meanwhile is a
   * CONFLICT, and the next attempt reads).
   */
  async add(
    scope: Readonly<Scope>,
    sessionId: string,
    ids: readonly string[],
    read?: RecalledIds,
  ): Promise<void> {
    if (ids.length === 0) return;
    const session = sessionCacheKey(scope, sessionId);
    let basis = read?.head?.session === session ? read : undefined;
    await retryOnConflict(async () => {
      let known: RecalledIds;
      if (basis) known = basis;
      else {
        const entry = await this.#sessions.kvGet(scope, sessionId, RECALL_INJECTED_KEY);
        const head = this.#parse(session, entry?.value, entry?.version ?? 0);
        known = await this.#known(scope, sessionId, session, head);
      }
      basis = undefined;
      const head = known.head!;
      const added = [...new Set(ids)].filter((id) => !known.has(id));
      if (added.length === 0) return;
      const expectedVersion = head.version;
      if (head.ids.size + added.length > HEAD_IDS && head.ids.size > 0) {
        return this.#seal(scope, sessionId, session, head, added, expectedVersion);
      }
      const appended = this.#appended(head, added);
      const raw = appended ?? serialize(head.sealed, [...head.ids, ...added].slice(-HEAD_IDS));
      const written = await this.#sessions.kvSet(scope, sessionId, RECALL_INJECTED_KEY, raw, {
        expectedVersion,
      });
      if (appended === undefined) {
        this.#parse(session, raw, written.version);
        return;
      }
      // Only now that the value is stored do the new ids join the set `load` returned (a retry may not have been it).
      for (const id of added) head.ids.add(id);
      this.#heads.set(session, {
        session,
        raw,
        version: written.version,
        sealed: head.sealed,
        ids: head.ids,
        canonical: true,
      });
    });
  }

  /**
   * Stores the head's ids as a chunk of their own, then (with the version read) the head naming it with the
   * new ids; drops the chunks past MAX_CHUNKS. The chunk of an attempt that meets CONFLICT is deleted.
   */
  async #seal(
    scope: Readonly<Scope>,
    sessionId: string,
    session: string,
    head: Head,
    added: readonly string[],
    expectedVersion: number,
  ): Promise<void> {
    const chunkKey = `${RECALL_INJECTED_CHUNK_PREFIX}${shortId()}`;
    await this.#sessions.kvSet(scope, sessionId, chunkKey, JSON.stringify([...head.ids]));
    const sealed = [...head.sealed, chunkKey];
    const dropped = sealed.splice(0, Math.max(0, sealed.length - MAX_CHUNKS));
    const raw = serialize(sealed, added.slice(-HEAD_IDS));
    let version: number;
    try {
      ({ version } = await this.#sessions.kvSet(scope, sessionId, RECALL_INJECTED_KEY, raw, {
        expectedVersion,
      }));
    } catch (error) {
      await this.#deleteQuietly(scope, sessionId, chunkKey);
      throw error;
    }
    this.#chunks.set(session + JSON.stringify(chunkKey), head.ids);
    this.#parse(session, raw, version);
    for (const key of dropped) await this.#deleteQuietly(scope, sessionId, key);
  }

  /** A head value's chunk keys and ids; an unreadable one is none (it only costs re-injecting; `add` rewrites it). */
  #parse(session: string, raw: string | undefined, version: number): Head {
    if (raw === undefined) return { session, raw, version, sealed: [], ids: new Set(), canonical: false };
    const last = this.#heads.get(session);
    if (last?.raw === raw && last.version === version) return last;
    let sealed: readonly string[] = [];
    let ids: readonly string[] = [];
    try {
      const parsed = HeadSchema.safeParse(JSON.parse(raw));
      if (parsed.success) {
        if (Array.isArray(parsed.data)) ids = parsed.data;
        else ({ sealed, ids } = parsed.data);
      }
    } catch {
      // nothing readable
    }
    const set = new Set(ids);
    const head = { session, raw, version, sealed, ids: set, canonical: serialize(sealed, set) === raw };
    this.#heads.set(session, head);
    return head;
  }

  /**
   * The common write without building the head again: a head in the form `serialize` makes, with ids,
   * gets the new ids' JSON spliced in before its closing bracket, byte for byte what a rebuild writes.
   */
  #appended(head: Head, added: readonly string[]): string | undefined {
    if (head.raw === undefined || !head.canonical || head.ids.size === 0) return undefined;
    const close = head.sealed.length === 0 ? ']' : ']}';
    return `${head.raw.slice(0, -close.length)},${JSON.stringify(added).slice(1, -1)}${close}`;
  }

  /** The ids of the head's chunks and the head's own; chunks are read only when not cached (the usual turn reads none). */
  async #known(scope: Readonly<Scope>, sessionId: string, session: string, head: Head): Promise<RecalledIds> {
    const cached = head.sealed.map((key) => this.#chunks.get(session + JSON.stringify(key)));
    const chunks = cached.includes(undefined)
      ? await Promise.all(head.sealed.map((key) => this.#readChunk(scope, sessionId, session, key)))
      : (cached as ReadonlySet<string>[]);
    return new RecalledIds([...chunks, head.ids], head);
  }

  /** A sealed chunk's ids, read and cached (a missing or unreadable chunk has none). */
  async #readChunk(
    scope: Readonly<Scope>,
    sessionId: string,
    session: string,
    key: string,
  ): Promise<ReadonlySet<string>> {
    const cacheKey = session + JSON.stringify(key);
    const cached = this.#chunks.get(cacheKey);
    if (cached) return cached;
    const entry = await this.#sessions.kvGet(scope, sessionId, key);
    let ids: ReadonlySet<string> = new Set();
    try {
      const parsed = entry ? IdsSchema.safeParse(JSON.parse(entry.value)) : undefined;
      if (parsed?.success) ids = new Set(parsed.data);
    } catch {
      // none
    }
    this.#chunks.set(cacheKey, ids);
    return ids;
  }

  /** Deletes a chunk no head names (any failure leaves it behind: it only takes a k-v slot). */
  async #deleteQuietly(scope: Readonly<Scope>, sessionId: string, key: string): Promise<void> {
    try {
      await this.#sessions.kvDelete(scope, sessionId, key);
    } catch {
      // left behind
    }
  }
}

/** A session's key in this tracker's caches (a chunk's: this and the chunk key's JSON). */
function sessionCacheKey(scope: Readonly<Scope>, sessionId: string): string {
  return JSON.stringify([scope.userId, scope.agentId ?? null, sessionId]);
}
