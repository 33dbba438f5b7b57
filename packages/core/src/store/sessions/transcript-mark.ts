import { z } from 'zod';
import { IsoDateSchema } from '../../foundation/record-fields.js';
import type { TranscriptEntry } from './record.js';

/**
 * How far a transcript was read: its last read entry's time, and how many entries of that millisecond
 * were read (the entries of one append share their time). It survives the transcript cap evicting old
 * entries, which a position would not.
 */
export const TranscriptMarkSchema = z.object({
  ts: IsoDateSchema,
  seen: z.number().int().min(1),
});

export type TranscriptMark = z.infer<typeof TranscriptMarkSchema>;

/** The mark after the first `end` entries of a transcript (`end` ≥ 1; default: all of them). */
export function markAfter(transcript: readonly TranscriptEntry[], end = transcript.length): TranscriptMark {
  const last = transcript[end - 1]!;
  const ms = Date.parse(last.ts);
  let seen = 0;
  for (let i = 0; i < end; i++) if (Date.parse(transcript[i]!.ts) === ms) seen++;
  return { ts: last.ts, seen };
}

/** The position of the first entry after `mark` (0 without one). */
export function positionAfter(
  transcript: readonly TranscriptEntry[],
  mark: TranscriptMark | undefined,
): number {
  if (!mark) return 0;
  const markMs = Date.parse(mark.ts);
  let sameMs = 0;
  for (const [position, entry] of transcript.entries()) {
    const ms = Date.parse(entry.ts);
    if (ms > markMs) return position;
    if (ms === markMs && ++sameMs > mark.seen) return position;
  }
  return transcript.length;
}

/** Negative when `a` is before `b`, 0 when they are the same, positive after. */
export function compareMarks(a: TranscriptMark, b: TranscriptMark): number {
  return Date.parse(a.ts) - Date.parse(b.ts) || a.seen - b.seen;
}
