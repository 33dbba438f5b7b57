import { z } from 'zod';
import { IsoDateSchema } from '../../foundation/record-fields.js';

/*
 * Feedback signals, which the dream's consolidation reads besides the facts (kept by `FeedbackLog`,
 * feedback-log.ts; they can also be given as a plain array).
 */

/** A feedback signal: `correction` (the user corrected the agent), `positive`, `negative`, or another kind. */
export const FeedbackSignalSchema = z.object({
  /** Set when the signal was recorded through `FeedbackLog`. */
  id: z.string().min(1).max(128).optional(),
  kind: z.union([z.enum(['correction', 'positive', 'negative']), z.string().min(1).max(64)]),
  text: z.string().min(1).max(10_000),
  /** When it was given (ISO time). */
  at: IsoDateSchema,
  /** The conversation it was given in. */
  sessionId: z.string().max(128).optional(),
});

export type FeedbackSignal = z.infer<typeof FeedbackSignalSchema>;

/** The window of feedback a consolidation sees: the last 7 days, at most 50 signals. */
export const FEEDBACK_WINDOW = Object.freeze({ days: 7, max: 50 });

/** Feedback given within the last `days` before `nowMs`, newest `max` of it, oldest first. */
export function recentFeedback(
  feedback: readonly FeedbackSignal[],
  nowMs: number,
  window: { days: number; max: number } = FEEDBACK_WINDOW,
): FeedbackSignal[] {
  const since = nowMs - window.days * 24 * 60 * 60 * 1000;
  return feedback
    .filter((f) => {
      const at = Date.parse(f.at);
      return at >= since && at <= nowMs;
    })
    .sort((a, b) => Date.parse(a.at) - Date.parse(b.at))
    .slice(-window.max);
}
