import { toChatMessage } from '../../runtime/transcript-turns.js';
import type { TranscriptEntry } from '../../store/sessions/record.js';
import { type Exchange, lastExchange } from './exchange.js';

/** A turn past the watermark: its number in the session, its exchange, and where it ends. */
export interface PendingTurn {
  /** The turn's number (0 = the first user message the transcript holds). */
  turn: number;
  /** Null when the user message has no text (nothing to extract; still read). */
  exchange: Exchange | null;
  /** The position after the turn's last entry. */
  end: number;
  /** Characters of the exchange (user message and answer), for the token trigger. */
  chars: number;
}

/**
 * The turns of a transcript that start at or after `start`, oldest first. Entries at `start` before the
 * first user message (the tail of a turn the cap cut) are not a turn and are skipped.
 */
export function pendingTurnsOf(transcript: readonly TranscriptEntry[], start: number): PendingTurn[] {
  const turns: PendingTurn[] = [];
  let turn = -1;
  let open: { turn: number; from: number } | undefined;
  const close = (end: number) => {
    if (!open) return;
    const exchange = lastExchange(transcript.slice(open.from, end).map(toChatMessage));
    const chars = exchange ? exchange.user.length + (exchange.answer?.length ?? 0) : 0;
    turns.push({ turn: open.turn, exchange, end, chars });
    open = undefined;
  };
  transcript.forEach((entry, position) => {
    if (entry.role !== 'user') return;
    turn++;
    if (position < start) return;
    close(position);
    open = { turn, from: position };
  });
  close(transcript.length);
  return turns;
}
