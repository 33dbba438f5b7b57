import { isKiokuError } from '../../foundation/errors.js';
import type { SessionStore } from '../../store/sessions/store.js';
import { positionAfter } from '../../store/sessions/transcript-mark.js';
import type { ExtractionOutbox } from './outbox.js';

/** What the outbox holds: user turns recorded and not yet extracted, and when the oldest was recorded. */
export interface OutboxBacklog {
  /** User messages past their session's watermark, over every user the pending index lists. */
  pendingTurns: number;
  /** The oldest such message's time (epoch ms), when there is one. */
  oldestAt?: number;
}

/** Every entry a transcript can hold (the session store caps it well below). */
const READ_ALL = 100_000;

/**
 * Measure the outbox's backlog (for `kioku.outbox.pending_turns` and `.oldest_pending_age`): for every
 * session the pending index lists, the user messages after its watermark (after a claim's start: a pass
 * that died is pending too). A read of each listed session's transcript: a worker does it once per batch,
 * and only when metrics are on.
 */
export async function measureBacklog(
  outbox: ExtractionOutbox,
  sessions: SessionStore,
): Promise<OutboxBacklog> {
  const backlog: OutboxBacklog = { pendingTurns: 0 };
  for (const scope of await outbox.index.users()) {
    const listed = await outbox.index.sessions(scope);
    if (listed.length === 0) continue;
    const marks = await outbox.watermarks.read(scope);
    for (const { sessionId } of listed) {
      let transcript: Awaited<ReturnType<SessionStore['transcriptReadLast']>>;
      try {
        transcript = await sessions.transcriptReadLast(scope, sessionId, READ_ALL);
      } catch (error) {
        if (isKiokuError(error, 'NOT_FOUND')) continue;
        throw error;
      }
      const mark = marks.sessions[sessionId];
      const start = positionAfter(transcript, mark?.claim ? mark.claim.from : mark);
      for (let i = start; i < transcript.length; i++) {
        const entry = transcript[i]!;
        if (entry.role !== 'user') continue;
        backlog.pendingTurns++;
        const at = Date.parse(entry.ts);
        if (backlog.oldestAt === undefined || at < backlog.oldestAt) backlog.oldestAt = at;
      }
    }
  }
  return backlog;
}
