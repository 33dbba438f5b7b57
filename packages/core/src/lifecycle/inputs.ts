import { z } from 'zod';
import { IsoDateSchema } from '../records/common.js';

/*
 * What the dream passes read besides the facts: feedback signals (kept by `FeedbackLog`, feedback.ts) and
 * the conversation log (derived from the session transcripts by `ConversationLog`, conversation-log.ts).
 * Both can also be given as plain arrays.
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

/** The seed's window of feedback a consolidation sees: the last 7 days, at most 50 signals. */
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
