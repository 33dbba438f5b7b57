import { z } from 'zod';
import { IdSchema } from '../../foundation/ids.js';
import { parseJsonOrUndefined } from '../../foundation/json.js';
import type { Scope } from '../../foundation/scope.js';
import { OwnSession } from '../../store/sessions/own-session.js';
import type { SessionStore } from '../../store/sessions/store.js';

/** When a fact was last shown to the model, and how often, within the recall log's window. */
export interface RecallStats {
  lastRecalledAt: string;
  recalls: number;
}

/** More entries than any transcript keeps (the store's largest read). */
const READ_ALL = 100_000;

/** Most fact ids one turn's entry keeps (a turn shows at most a few hundred facts). */
const MAX_IDS_PER_TURN = 1_000;

const EntrySchema = z.object({ facts: z.array(IdSchema).max(MAX_IDS_PER_TURN) });

/**
 * Which facts the model was shown, turn by turn, so that "least recently used" can count a recall as a
 * use without rewriting the fact (a rewrite would bump its version and turn the model's next edit of it
 * into a conflict). Each turn appends one entry to the transcript of a dedicated per-user session:
 * appends are atomic on every backend, so app instances never overwrite each other's entries, and the
 * transcript's cap (500 entries by default) bounds the log — the window "recently" is measured in.
 */
export class RecallLog {
  readonly #own: OwnSession;

  constructor(sessions: SessionStore) {
    this.#own = new OwnSession(sessions, 'recall-log', 'Kioku recall log');
  }

  /** Note that the model was shown these facts now (nothing is written for none). */
  async record(scope: Scope, factIds: readonly string[]): Promise<void> {
    if (factIds.length === 0) return;
    const facts = [...new Set(factIds)].slice(0, MAX_IDS_PER_TURN);
    await this.#own.write(scope, (sessionId, s) =>
      this.#own.sessions.transcriptAppend(s, sessionId, {
        role: 'system',
        content: JSON.stringify({ facts }),
      }),
    );
  }

  /** Per fact id, its latest recall and how many turns recalled it, over the log's window. */
  async stats(scope: Scope): Promise<Map<string, RecallStats>> {
    const stats = new Map<string, RecallStats>();
    const entries = await this.#own.read(
      scope,
      (sessionId, s) => this.#own.sessions.transcriptReadLast(s, sessionId, READ_ALL),
      [],
    );
    for (const entry of entries) {
      const parsed = EntrySchema.safeParse(parseJsonOrUndefined(entry.content));
      // An entry this version cannot read is skipped: the log informs eviction, it is not the data.
      if (!parsed.success) continue;
      for (const id of parsed.data.facts) {
        const known = stats.get(id);
        stats.set(id, {
          lastRecalledAt: known && known.lastRecalledAt > entry.ts ? known.lastRecalledAt : entry.ts,
          recalls: (known?.recalls ?? 0) + 1,
        });
      }
    }
    return stats;
  }
}
