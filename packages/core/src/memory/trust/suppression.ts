import { createHmac, randomBytes } from 'node:crypto';
import { IdSchema } from '../../foundation/ids.js';
import { parseJsonOrUndefined } from '../../foundation/json.js';
import { parseOrThrow } from '../../foundation/validation.js';
import { englishAnalyzer } from '../../search/analyzer.js';
import { OwnSession } from '../../store/sessions/own-session.js';
import type { SessionStore } from '../../store/sessions/store.js';
import { updateKvValue } from '../../store/sessions/update-value.js';

/** One forgotten fact as the list keeps it: a keyed hash of its normalised content, never the text. */
export interface Suppression {
  /** HMAC-SHA256 (hex) of the content's normalised form, keyed with the user's own random key. */
  hash: string;
  /** When the fact was forgotten. */
  at: string;
}

const KEY_KEY = 'key';
/** One entry per hash: how lists were kept before buckets (read, and moved into buckets on the next add). */
const PREFIX = 'suppressed/';
/**
 * The hashes, in 16 buckets by their first hex digit (`suppressions/0` … `suppressions/f`), each a JSON
 * object `{ hash: at }`. A session keeps only so many keys (`kvCap`, 200 by default, oldest evicted): one
 * key per forgotten fact let the 201st forget evict the first (and the user's key with it). 17 keys hold
 * any number, up to the value size limit (2 MiB a bucket: about 300,000 forgotten facts a user).
 */
const BUCKET_PREFIX = 'suppressions/';

function bucketOf(hash: string): string {
  return `${BUCKET_PREFIX}${hash[0]}`;
}

function parseBucket(value: string | undefined): Record<string, string> {
  const parsed = value === undefined ? undefined : parseJsonOrUndefined(value);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
  return Object.fromEntries(
    Object.entries(parsed as Record<string, unknown>).filter(
      (e): e is [string, string] => typeof e[1] === 'string',
    ),
  );
}

/**
 * The normalised form a suppression is matched on: the analyzer's distinct terms, sorted (case, stop
 * words, word order, punctuation and inflection do not matter: "The staging vault passphrase is
 * heron-7731" and "staging vault passphrase: heron-7731" are one). A paraphrase with other words is not
 * matched; null when the text has no term.
 */
export function normalisedContent(text: string): string | null {
  const terms = [...new Set(englishAnalyzer.terms(text.normalize('NFKC')))].sort();
  return terms.length === 0 ? null : terms.join(' ');
}

/**
 * What a user has asked to forget, so that it stays forgotten: extraction run again over a session that
 * still says it drops a candidate that matches (see `extractFacts`). Kept per user (every agent) in a
 * session of Kioku's own (`{ kioku: 'suppressions' }`) as keyed hashes — the key is random per user and
 * stored beside them, so the list holds no text and its hashes cannot be compared across users; it goes
 * with the user's sessions when `forgetUser` erases her. The user can list and revoke entries.
 */
export class SuppressionList {
  readonly #own: OwnSession;
  readonly #sessions: SessionStore;

  constructor(sessions: SessionStore) {
    this.#sessions = sessions;
    this.#own = new OwnSession(sessions, 'suppressions', 'Kioku forgotten facts');
  }

  /** Suppress each text (its normalised form) for the user; returns the hashes added. */
  async add(userId: string, texts: readonly string[], at: string): Promise<string[]> {
    parseOrThrow(IdSchema, userId, 'user id');
    const forms = texts.map(normalisedContent).filter((f): f is string => f !== null);
    if (forms.length === 0) return [];
    return this.#own.write({ userId }, async (sessionId, s) => {
      const key = await this.#key(s, sessionId, true);
      const hashes = [...new Set(forms.map((f) => hmac(key!, f)))];
      const added = new Map<string, Record<string, string>>();
      for (const hash of hashes) added.set(bucketOf(hash), { ...added.get(bucketOf(hash)), [hash]: at });
      // Entries of the one-key-per-hash layout go into their buckets first, then are deleted (before any
      // bucket is written, so no write evicts the key).
      const legacy = (await this.#sessions.kvList(s, sessionId)).filter((e) => e.key.startsWith(PREFIX));
      for (const entry of legacy) {
        const old = parseJsonOrUndefined(entry.value) as Suppression | undefined;
        if (typeof old?.hash !== 'string' || typeof old.at !== 'string') continue;
        const bucket = bucketOf(old.hash);
        added.set(bucket, { [old.hash]: old.at, ...added.get(bucket) });
      }
      for (const entry of legacy) await this.#sessions.kvDelete(s, sessionId, entry.key);
      for (const [bucket, entries] of added) {
        await updateKvValue(this.#sessions, s, sessionId, bucket, (current) =>
          JSON.stringify({ ...parseBucket(current?.value), ...entries }),
        );
      }
      return hashes;
    });
  }

  /** For each text, whether the user has suppressed it. */
  async matches(userId: string, texts: readonly string[]): Promise<boolean[]> {
    parseOrThrow(IdSchema, userId, 'user id');
    const none = texts.map(() => false);
    return this.#own.read(
      { userId },
      async (sessionId, s) => {
        const key = await this.#key(s, sessionId, false);
        if (key === undefined) return none;
        const buckets = new Map<string, Record<string, string>>();
        const out: boolean[] = [];
        for (const text of texts) {
          const form = normalisedContent(text);
          if (form === null) {
            out.push(false);
            continue;
          }
          const hash = hmac(key, form);
          const bucket = bucketOf(hash);
          if (!buckets.has(bucket)) {
            buckets.set(bucket, parseBucket((await this.#sessions.kvGet(s, sessionId, bucket))?.value));
          }
          out.push(
            buckets.get(bucket)![hash] !== undefined ||
              (await this.#sessions.kvGet(s, sessionId, `${PREFIX}${hash}`)) !== null,
          );
        }
        return out;
      },
      none,
    );
  }

  /** The user's suppressions, oldest first. */
  async list(userId: string): Promise<Suppression[]> {
    parseOrThrow(IdSchema, userId, 'user id');
    const entries = await this.#own.read({ userId }, (id, s) => this.#sessions.kvList(s, id), []);
    const bucketed = entries
      .filter((e) => e.key.startsWith(BUCKET_PREFIX))
      .flatMap((e) => Object.entries(parseBucket(e.value)).map(([hash, at]) => ({ hash, at })));
    const legacy = entries
      .filter((e) => e.key.startsWith(PREFIX))
      .map((e) => parseJsonOrUndefined(e.value) as Suppression | undefined)
      .filter((x): x is Suppression => typeof x?.hash === 'string' && typeof x.at === 'string');
    return [...bucketed, ...legacy].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  }

  /** Lift one suppression (the user changed her mind): true when there was one. */
  async revoke(userId: string, hash: string): Promise<boolean> {
    parseOrThrow(IdSchema, userId, 'user id');
    return this.#own.read(
      { userId },
      async (id, s) => {
        let found = false;
        if (!/^[0-9a-f]{64}$/.test(hash)) return this.#sessions.kvDelete(s, id, `${PREFIX}${hash}`);
        await updateKvValue(this.#sessions, s, id, bucketOf(hash), (current) => {
          const entries = parseBucket(current?.value);
          found = entries[hash] !== undefined;
          if (!found) return null;
          delete entries[hash];
          return JSON.stringify(entries);
        });
        const legacy = await this.#sessions.kvDelete(s, id, `${PREFIX}${hash}`);
        return found || legacy;
      },
      false,
    );
  }

  /**
   * The user's list as it is now, to write back after a restore (an import) that may have replaced
   * Kioku's own sessions with older ones: call the returned function once the restore is done. Entries
   * the restore brought under another key are left as they are (their hashes do not match under this key).
   */
  async preserve(userId: string): Promise<() => Promise<void>> {
    parseOrThrow(IdSchema, userId, 'user id');
    const kept = await this.#own.read(
      { userId },
      async (sessionId, s) => ({
        key: await this.#key(s, sessionId, false),
        entries: (await this.#sessions.kvList(s, sessionId)).filter(
          (e) => e.key.startsWith(PREFIX) || e.key.startsWith(BUCKET_PREFIX),
        ),
      }),
      { key: undefined, entries: [] },
    );
    const { key, entries } = kept;
    if (key === undefined) return async () => {};
    return async () => {
      // A new list object: the restore may have replaced the session this one had found.
      const after = new SuppressionList(this.#sessions);
      await after.#own.write({ userId }, async (sessionId, s) => {
        await this.#sessions.kvSet(s, sessionId, KEY_KEY, key);
        for (const entry of entries) await this.#sessions.kvSet(s, sessionId, entry.key, entry.value);
      });
    };
  }

  /** The user's key (created on the first `add`). */
  async #key(s: { userId: string }, sessionId: string, create: boolean): Promise<string | undefined> {
    const found = await this.#sessions.kvGet(s, sessionId, KEY_KEY);
    if (found) return found.value;
    if (!create) return undefined;
    const key = randomBytes(32).toString('hex');
    try {
      await this.#sessions.kvSet(s, sessionId, KEY_KEY, key, { expectedVersion: 0 });
      return key;
    } catch {
      // Another writer made one first: use it.
      return (await this.#sessions.kvGet(s, sessionId, KEY_KEY))?.value;
    }
  }
}

function hmac(key: string, form: string): string {
  return createHmac('sha256', key).update(form).digest('hex');
}
