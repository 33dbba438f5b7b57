import { randomBytes } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { z } from 'zod';
import { LIMITS } from './limits.js';

/**
 * Ids (users, agents, threads, records) are restricted to characters that are safe as file names,
 * key parts and URL segments: letters, digits and `_ . @ + -`, not starting with `.` or `-`.
 * Hostile values such as `../../etc/passwd`, `*`, `a:b` or `a/b` are rejected, never escaped.
 */
export const ID_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_.@+-]*$/;

export const IdSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(LIMITS.idChars, `must be at most ${LIMITS.idChars} characters`)
  .regex(ID_PATTERN, 'may contain only letters, digits and _ . @ + - and must not start with . or -');

/** A UUID (any version, lower or upper case). */
export const UUID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** UUID (any version, lower or upper case), as used for session ids. */
export const UuidSchema = z.string().regex(UUID_PATTERN, 'must be a UUID');

/** A short random id (12 hex characters, 48 bits) — cheap in prompt tokens. */
export function shortId(): string {
  return randomBytes(6).toString('hex');
}

/** A time-ordered UUIDv7, used for sessions so they sort by creation time. */
export function timeOrderedId(msecs?: number): string {
  return msecs === undefined ? uuidv7() : uuidv7({ msecs });
}
