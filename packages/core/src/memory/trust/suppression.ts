import { createHmac, randomBytes } from 'node:crypto';
import { IdSchema } from '../../foundation/ids.js';
import { parseJsonOrUndefined } from '../../foundation/json.js';
import { parseOrThrow } from '../../foundation/validation.js';
import { englishAnalyzer } from '../../search/analyzer.js';
import { OwnSession } from '../../store/sessions/own-session.js';
import type { SessionStore } from '../../store/sessions/store.js';

/** One forgotten fact as the list keeps it: a keyed hash of its normalised content, never the text. */
export interface Suppression {
  /** HMAC-SHA256 (hex) of the content's normalised form, keyed with the user's own random key. */
  hash: string;
  /** When the fact was forgotten. */
  at: string;
}

const KEY_KEY = 'key';
const PREFIX = 'suppressed/';

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
      for (const hash of hashes) {
        await this.#sessions.kvSet(s, sessionId, `${PREFIX}${hash}`, JSON.stringify({ hash, at }));
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
        const out: boolean[] = [];
        for (const text of texts) {
          const form = normalisedContent(text);
          out.push(
            form !== null &&
              (await this.#sessions.kvGet(s, sessionId, `${PREFIX}${hmac(key, form)}`)) !== null,
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
    return entries
      .filter((e) => e.key.startsWith(PREFIX))
      .map((e) => parseJsonOrUndefined(e.value) as Suppression | undefined)
      .filter((x): x is Suppression => typeof x?.hash === 'string' && typeof x.at === 'string')
      .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  }

  /** Lift one suppression (the user changed her mind): true when there was one. */
  async revoke(userId: string, hash: string): Promise<boolean> {
    parseOrThrow(IdSchema, userId, 'user id');
    return this.#own.read({ userId }, (id, s) => this.#sessions.kvDelete(s, id, `${PREFIX}${hash}`), false);
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
        entries: (await this.#sessions.kvList(s, sessionId)).filter((e) => e.key.startsWith(PREFIX)),
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
