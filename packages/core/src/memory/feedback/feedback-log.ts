import { z } from 'zod';
import { type Clock, isoAt, systemClock } from '../../foundation/clock.js';
import { CorruptDataError } from '../../foundation/errors.js';
import { shortId, UuidSchema } from '../../foundation/ids.js';
import { parseJsonOrUndefined } from '../../foundation/json.js';
import { parseScope, type Scope } from '../../foundation/scope.js';
import { parseOrThrow } from '../../foundation/validation.js';
import type { KiokuStores } from '../../store/bundle/bundle.js';
import { OwnSession } from '../../store/sessions/own-session.js';
import type { SessionStore } from '../../store/sessions/store.js';
import { FEEDBACK_WINDOW, type FeedbackSignal, FeedbackSignalSchema, recentFeedback } from './signal.js';

export const FEEDBACK_KINDS = ['correction', 'positive', 'negative'] as const;
export type FeedbackKind = (typeof FEEDBACK_KINDS)[number];

export const FEEDBACK_LIMITS = Object.freeze({
  /** Characters of one signal's text. */
  textChars: 2000,
  /** Signals kept per user + agent; past it the oldest is dropped (FIFO). */
  maxSignals: 200,
});

/** What an app or the `record_feedback` tool records. */
export const FeedbackInputSchema = z.strictObject({
  /** `correction`: the user corrected the agent; `positive` / `negative`: what they liked or disliked. */
  kind: z.enum(FEEDBACK_KINDS),
  text: z
    .string()
    .trim()
    .min(1, 'feedback text must not be empty')
    .max(
      FEEDBACK_LIMITS.textChars,
      `feedback text is larger than the ${FEEDBACK_LIMITS.textChars}-character limit`,
    ),
  /** The conversation it was given in. */
  sessionId: UuidSchema.optional(),
});

export type FeedbackInput = z.input<typeof FeedbackInputSchema>;

export interface FeedbackLogOptions {
  clock?: Clock;
  /** Signals kept per user + agent (default 200; the session store's `kvCap` bounds it too). */
  maxSignals?: number;
}

const KEY_PREFIX = 'feedback/';
const SESSION_TITLE = 'Kioku feedback';

/**
 * Feedback signals of one user + agent, durable on every backend: each is one value in a dedicated
 * session's k-v map (`{ kioku: 'feedback' }`, see `isKiokuSession`), oldest first, at most `maxSignals`
 * (the oldest dropped first). Consolidation reads the last 7 days of it, at most 50 (`recent`), and
 * learns anti-patterns from the corrections.
 */
export class FeedbackLog {
  readonly #sessions: SessionStore;
  readonly #own: OwnSession;
  readonly #clock: Clock;
  readonly #max: number;

  constructor(sessions: SessionStore, options: FeedbackLogOptions = {}) {
    this.#sessions = sessions;
    this.#own = new OwnSession(sessions, 'feedback', SESSION_TITLE);
    this.#clock = options.clock ?? systemClock;
    this.#max = options.maxSignals ?? FEEDBACK_LIMITS.maxSignals;
  }

  /** Record a signal, stamped now. VALIDATION for a bad kind, an empty or too long text, or a bad session id. */
  async record(scope: Scope, input: FeedbackInput): Promise<FeedbackSignal> {
    const s = parseScope(scope);
    const { kind, text, sessionId } = parseOrThrow(FeedbackInputSchema, input, 'feedback');
    const signal: FeedbackSignal = {
      id: shortId(),
      kind,
      text,
      at: isoAt(this.#clock),
      ...(sessionId !== undefined ? { sessionId: sessionId.toLowerCase() } : {}),
    };
    await this.#own.write(s, async (sessionId, own) => {
      await this.#sessions.kvSet(own, sessionId, `${KEY_PREFIX}${signal.id}`, JSON.stringify(signal));
      const keys = (await this.#sessions.kvList(own, sessionId))
        .map((e) => e.key)
        .filter((k) => k.startsWith(KEY_PREFIX));
      for (const key of keys.slice(0, Math.max(0, keys.length - this.#max))) {
        await this.#sessions.kvDelete(own, sessionId, key);
      }
    });
    return signal;
  }

  /** Every kept signal, oldest first. */
  list(scope: Scope): Promise<FeedbackSignal[]> {
    return this.#own.read(
      parseScope(scope),
      async (sessionId, s) =>
        (await this.#sessions.kvList(s, sessionId))
          .filter((e) => e.key.startsWith(KEY_PREFIX))
          .map((e) => {
            const parsed = FeedbackSignalSchema.safeParse(parseJsonOrUndefined(e.value));
            if (!parsed.success) {
              throw new CorruptDataError(`The feedback signal "${e.key}" is not readable.`, {
                details: { key: e.key },
              });
            }
            return parsed.data;
          }),
      [],
    );
  }

  /** The signals a consolidation sees: the last 7 days before now, at most 50 (the newest), oldest first. */
  async recent(scope: Scope, window = FEEDBACK_WINDOW): Promise<FeedbackSignal[]> {
    return recentFeedback(await this.list(scope), this.#clock.now(), window);
  }
}

/**
 * Record a feedback signal for the scope's user (and agent) — a correction, or what they liked or
 * disliked — e.g. from a thumbs-down button. The scope is the app's, never a model's argument.
 */
export function recordFeedback(
  stores: Pick<KiokuStores, 'sessions'>,
  scope: Scope,
  input: FeedbackInput,
  options: FeedbackLogOptions = {},
): Promise<FeedbackSignal> {
  return new FeedbackLog(stores.sessions, options).record(scope, input);
}
