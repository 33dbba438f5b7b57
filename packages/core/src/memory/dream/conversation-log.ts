import { z } from 'zod';
import { CorruptDataError, isKiokuError } from '../../foundation/errors.js';
import { parseJsonOrUndefined } from '../../foundation/json.js';
import { IsoDateSchema } from '../../foundation/record-fields.js';
import type { Scope } from '../../foundation/scope.js';
import { parseOrThrow } from '../../foundation/validation.js';
import { isKiokuSession } from '../../store/sessions/kioku-sessions.js';
import { baseScope, OwnSession } from '../../store/sessions/own-session.js';
import type { KvEntry } from '../../store/sessions/record.js';
import type { SessionStore } from '../../store/sessions/store.js';
import {
  compareMarks,
  markAfter,
  positionAfter,
  type TranscriptMark,
  TranscriptMarkSchema,
} from '../../store/sessions/transcript-mark.js';
import { updateKvValue } from '../../store/sessions/update-value.js';

/** One message of the conversation log: the user's, or the agent's reply (`role`, default `user`). */
export const ConversationLogEntrySchema = z.object({
  text: z.string().min(1).max(100_000),
  role: z.enum(['user', 'assistant']).optional(),
  at: IsoDateSchema.optional(),
  sessionId: z.string().max(128).optional(),
  /** The turn of `sessionId` it belongs to (0 = the session's first user message). */
  turn: z.number().int().min(0).optional(),
});

export type ConversationLogEntry = z.infer<typeof ConversationLogEntrySchema>;

/*
 * The conversation log the preference pass reads: the user's messages and the agent's replies since the
 * last pass, derived from the session transcripts (no store of its own). How far each session was read
 * is its watermark, kept in a dedicated session's k-v map; clearing the log advances the watermarks.
 */

/** How far a session's transcript was read (see `TranscriptMark`). */
export const LogWatermarkSchema = TranscriptMarkSchema;

export type LogWatermark = TranscriptMark;

const WatermarksRecordSchema = z.object({
  schemaVersion: z.literal(1),
  sessions: z.record(z.string(), LogWatermarkSchema),
});

export const CONVERSATION_LOG_DEFAULTS = Object.freeze({
  /** Entries one read returns at most (the newest are kept). */
  maxEntries: 1000,
  /** Characters kept of one message (a longer one is cut, marked with `…`). */
  maxEntryChars: 4000,
});

export interface ConversationLogOptions {
  maxEntries?: number;
  maxEntryChars?: number;
}

/** What one read of the log found. */
export interface ConversationLogRead {
  /** User and assistant messages after the watermarks, oldest first, at most `maxEntries` (the newest). */
  entries: ConversationLogEntry[];
  /** Per session, how far this read went: what `clear` advances the watermarks to. */
  marks: Record<string, LogWatermark>;
  /** Messages after the watermarks left out because there were more than `maxEntries`. */
  omitted: number;
}

const KEY = 'watermarks';
const SESSION_TITLE = 'Kioku conversation log';
/** Every entry a transcript can hold (the session store caps it well below). */
const READ_ALL = 100_000;

/**
 * The conversation log of one user + agent, derived from the transcripts of their conversations: user and
 * assistant text (never tool messages, system prompts, or the sessions Kioku keeps for itself), each with
 * its session, turn and time. `read` returns what is new since the watermarks; `clear(read)` advances them
 * to what that read saw, so messages that arrive meanwhile are read next time.
 *
 * The watermarks are one k-v value in a dedicated session (`{ kioku: 'conversation-log' }`), apart from
 * the kept changesets and the feedback so that neither's keys can evict them. A watermark is a time and a
 * count (entries of one append share their time): it survives the transcript cap evicting old entries.
 */
export class ConversationLog {
  readonly #sessions: SessionStore;
  readonly #own: OwnSession;
  readonly #maxEntries: number;
  readonly #maxEntryChars: number;

  constructor(sessions: SessionStore, options: ConversationLogOptions = {}) {
    this.#sessions = sessions;
    this.#own = new OwnSession(sessions, 'conversation-log', SESSION_TITLE);
    this.#maxEntries = options.maxEntries ?? CONVERSATION_LOG_DEFAULTS.maxEntries;
    this.#maxEntryChars = options.maxEntryChars ?? CONVERSATION_LOG_DEFAULTS.maxEntryChars;
  }

  /** The messages since the watermarks, and how far this read went. */
  async read(scope: Scope): Promise<ConversationLogRead> {
    const s = baseScope(scope);
    const watermarks = await this.watermarks(s);
    const found: (ConversationLogEntry & { ms: number; position: number })[] = [];
    const marks: Record<string, LogWatermark> = {};
    for (const session of await this.#sessions.list(s)) {
      if (isKiokuSession(session)) continue;
      const transcript = await this.#sessions
        .transcriptReadLast(s, session.id, READ_ALL)
        .catch((error: unknown) => {
          if (isKiokuError(error, 'NOT_FOUND')) return []; // deleted since it was listed
          throw error;
        });
      const last = transcript.at(-1);
      if (!last) continue;
      marks[session.id] = markAfter(transcript);
      const after = positionAfter(transcript, watermarks[session.id]);
      let turn = -1;
      transcript.forEach((entry, position) => {
        if (entry.role === 'user') turn++;
        if (position < after) return;
        if (entry.role !== 'user' && entry.role !== 'assistant') return;
        const text = entry.content.trim();
        if (text === '') return; // an assistant message that only called tools
        found.push({
          text: cut(text, this.#maxEntryChars),
          role: entry.role,
          at: entry.ts,
          sessionId: session.id,
          turn: Math.max(turn, 0),
          ms: Date.parse(entry.ts),
          position,
        });
      });
    }
    found.sort(
      (a, b) =>
        a.ms - b.ms ||
        (a.sessionId! < b.sessionId! ? -1 : a.sessionId! > b.sessionId! ? 1 : 0) ||
        a.position - b.position,
    );
    const kept = found.slice(-this.#maxEntries);
    return {
      entries: kept.map(({ ms: _ms, position: _position, ...entry }) => entry),
      marks,
      omitted: found.length - kept.length,
    };
  }

  /**
   * Clear what `read` returned: advance each session's watermark to its mark (never back), and drop the
   * watermarks of sessions that no longer exist. Written with the version read (read again on CONFLICT),
   * so two passes clearing at once (two app instances) both advance the watermarks.
   */
  async clear(scope: Scope, read: Pick<ConversationLogRead, 'marks'>): Promise<void> {
    const marks = Object.entries(read.marks).map(
      ([id, mark]) => [id, parseOrThrow(LogWatermarkSchema, mark, 'watermark')] as const,
    );
    if (marks.length === 0) return;
    const s = baseScope(scope);
    const live = new Set((await this.#sessions.list(s)).map((x) => x.id));
    await this.#own.write(s, (sessionId, own) =>
      updateKvValue(this.#sessions, own, sessionId, KEY, (entry) => {
        const next: Record<string, LogWatermark> = {};
        for (const [id, mark] of Object.entries(parseWatermarks(entry))) if (live.has(id)) next[id] = mark;
        for (const [id, mark] of marks) {
          if (!live.has(id)) continue;
          const old = next[id];
          next[id] = old && compareMarks(old, mark) > 0 ? old : mark;
        }
        return JSON.stringify({ schemaVersion: 1, sessions: next });
      }),
    );
  }

  /** Each session's watermark (sessions never read have none). */
  watermarks(scope: Scope): Promise<Record<string, LogWatermark>> {
    return this.#own.read(
      scope,
      async (sessionId, s) => parseWatermarks(await this.#sessions.kvGet(s, sessionId, KEY)),
      {},
    );
  }
}

/** The watermarks a stored value holds (none without one); CORRUPT_DATA when it is not readable. */
function parseWatermarks(entry: KvEntry | null): Record<string, LogWatermark> {
  if (entry === null) return {};
  const parsed = WatermarksRecordSchema.safeParse(parseJsonOrUndefined(entry.value));
  if (!parsed.success) {
    throw new CorruptDataError('The conversation log watermarks are not readable.', {
      details: { key: KEY },
    });
  }
  return parsed.data.sessions;
}

function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  if (/[\uD800-\uDBFF]/.test(text[end - 1] ?? '')) end--; // never split a surrogate pair
  return `${text.slice(0, end)}…`;
}
