import type { SessionInfo } from './record.js';

/**
 * The metadata key that marks a session Kioku keeps for itself (kept changesets, feedback, the
 * conversation log's watermarks); its value names the purpose. Apps should not set it on their sessions.
 */
export const KIOKU_SESSION_KEY = 'kioku';

/**
 * True for a session Kioku keeps for itself rather than a conversation: what an app that lists a user's
 * sessions (to resume the latest, to show a history) leaves out, and what the conversation log never reads.
 */
export function isKiokuSession(session: Pick<SessionInfo, 'metadata'>): boolean {
  return typeof session.metadata[KIOKU_SESSION_KEY] === 'string';
}
