import { z } from 'zod';
import type { Clock } from '../../foundation/clock.js';
import { defineTool, type Tool } from '../../model/tool.js';
import type { MemoryFeature } from '../../runtime/feature.js';
import type { SessionStore } from '../../store/sessions/store.js';
import { FEEDBACK_KINDS, FEEDBACK_LIMITS, FeedbackLog } from './feedback-log.js';

export const FEEDBACK_FEATURE = 'feedback';

export interface FeedbackFeatureOptions {
  /** Where signals are kept (the dedicated feedback session of each user + agent). */
  sessions: SessionStore;
  /** Stamps each signal (default: the system clock). */
  clock?: Clock;
}

/**
 * `record_feedback(kind, text)` for the model: a correction, or what the user liked or disliked, kept
 * for the dream's consolidation (which learns anti-patterns from corrections). The user and the session
 * are the conversation's, never the model's arguments.
 */
export function recordFeedbackTool(log: FeedbackLog): Tool {
  return defineTool({
    name: 'record_feedback',
    description: 'Record the user’s feedback or correction on your work.',
    parameters: z.object({
      kind: z.enum(FEEDBACK_KINDS),
      text: z.string().trim().min(1).max(FEEDBACK_LIMITS.textChars),
    }),
    async execute({ kind, text }, { scope }) {
      const signal = await log.record(scope, {
        kind,
        text,
        ...(scope.threadId !== undefined ? { sessionId: scope.threadId } : {}),
      });
      return `Recorded ${signal.kind} feedback.`;
    },
  });
}

/** The feedback feature: the `record_feedback` tool, no prompt block. */
export function feedback(options: FeedbackFeatureOptions): MemoryFeature {
  const log = new FeedbackLog(options.sessions, options.clock ? { clock: options.clock } : {});
  return { name: FEEDBACK_FEATURE, toolkit: { name: FEEDBACK_FEATURE, tools: [recordFeedbackTool(log)] } };
}
