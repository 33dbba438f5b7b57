import { z } from 'zod';
import { CorruptDataError } from '../../foundation/errors.js';
import { IdSchema } from '../../foundation/ids.js';
import { parseJsonOrUndefined } from '../../foundation/json.js';
import type { Scope } from '../../foundation/scope.js';
import { baseScope, OwnSession } from '../../store/sessions/own-session.js';
import type { KvEntry } from '../../store/sessions/record.js';
import type { SessionStore } from '../../store/sessions/store.js';
import { TranscriptMarkSchema } from '../../store/sessions/transcript-mark.js';

/**
 * How far extraction has read a session's transcript. `claim` is set while the changeset of the last
 * pass is being applied: its id, and where the pass started reading (`from`, absent when at the start).
 * A pass that died before the changeset was kept is read again from `from`; one that died after applies
 * the kept changeset, so the turns are extracted exactly once.
 */
export const ExtractionWatermarkSchema = TranscriptMarkSchema.extend({
  claim: z
    .object({
      changesetId: IdSchema,
      from: TranscriptMarkSchema.optional(),
    })
    .optional(),
  /** Passes over the turns after the mark that failed so far (they are skipped after a few). */
  failures: z.number().int().min(1).optional(),
});

export type ExtractionWatermark = z.infer<typeof ExtractionWatermarkSchema>;

const RecordSchema = z.object({
  schemaVersion: z.literal(1),
  sessions: z.record(z.string(), ExtractionWatermarkSchema),
});

/** The watermarks of one user + agent as read, with the version a write must expect (0: none yet). */
export interface WatermarksRead {
  sessions: Record<string, ExtractionWatermark>;
  version: number;
}

const KEY = 'watermarks';
const SESSION_TITLE = 'Kioku extraction watermarks';

/**
 * The extraction watermarks of one user + agent: per conversation session, how far extraction has read its
 * transcript (the transcript is the outbox: what is past the watermark is work still to do). One k-v value
 * in a dedicated session (`{ kioku: 'extraction' }`), so every backend keeps it durably, versioned, in
 * the user's snapshots and erased with the user; no app key can evict it. Every write expects the version
 * read, so of two passes over the same turns only the first to write keeps its result.
 */
export class ExtractionWatermarks {
  readonly #sessions: SessionStore;
  readonly #own: OwnSession;

  constructor(sessions: SessionStore) {
    this.#sessions = sessions;
    this.#own = new OwnSession(sessions, 'extraction', SESSION_TITLE);
  }

  read(scope: Scope): Promise<WatermarksRead> {
    return this.#own.read(
      baseScope(scope),
      async (sessionId, s) => parse(await this.#sessions.kvGet(s, sessionId, KEY)),
      { sessions: {}, version: 0 },
    );
  }

  /**
   * Write the watermarks of the sessions given (others as read), expecting `read.version`: CONFLICT when
   * another pass wrote since. `live`, when given, keeps only those sessions' watermarks (deleted
   * sessions' are dropped). Returns what is now stored.
   */
  async write(
    scope: Scope,
    read: WatermarksRead,
    changes: Record<string, ExtractionWatermark | null>,
    live?: ReadonlySet<string>,
  ): Promise<WatermarksRead> {
    const next: Record<string, ExtractionWatermark> = {};
    for (const [id, mark] of Object.entries(read.sessions)) if (!live || live.has(id)) next[id] = mark;
    for (const [id, mark] of Object.entries(changes)) {
      if (mark === null) delete next[id];
      else next[id] = ExtractionWatermarkSchema.parse(mark);
    }
    const value = JSON.stringify({ schemaVersion: 1, sessions: next });
    const entry = await this.#own.write(baseScope(scope), (sessionId, s) =>
      this.#sessions.kvSet(s, sessionId, KEY, value, { expectedVersion: read.version }),
    );
    return { sessions: next, version: entry.version };
  }
}

function parse(entry: KvEntry | null): WatermarksRead {
  if (entry === null) return { sessions: {}, version: 0 };
  const parsed = RecordSchema.safeParse(parseJsonOrUndefined(entry.value));
  if (!parsed.success) {
    throw new CorruptDataError('The extraction watermarks are not readable.', { details: { key: KEY } });
  }
  return { sessions: parsed.data.sessions, version: entry.version };
}
