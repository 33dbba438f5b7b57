import { isKiokuError, StorageError, ValidationError } from '@kioku/core';

interface PgErrorLike {
  code: string;
  message: string;
  severity?: string;
}

/** The PostgreSQL server error behind `error` (drizzle wraps it in a DrizzleQueryError), if any. */
function serverError(error: unknown): PgErrorLike | undefined {
  for (let e = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const candidate = e as Partial<PgErrorLike> & { name?: string };
    if (candidate.name === 'PostgresError' && typeof candidate.code === 'string')
      return candidate as PgErrorLike;
  }
  return undefined;
}

/**
 * Driver and socket error codes of a server that could not be reached, went away or did not answer in time
 * (postgres.js: `query_timeout`, `queue_timeout`, `connect_timeout`, a connection closed under a query).
 */
const UNREACHABLE = new Set([
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  'QUERY_TIMEOUT',
  'QUEUE_TIMEOUT',
  'CANCEL_UNANSWERED',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
/**
 * SQLSTATEs worth the same call again: the server shutting down, starting or recovering (57P01–57P03),
 * too many connections (53300), a lost connection (08…), a serialization failure or deadlock (40001, 40P01),
 * a statement cancelled by its timeout (57014).
 */
const RETRYABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '40001', '40P01', '57014']);

/**
 * True when `error` (or a cause of it) says PostgreSQL could not be reached or did not answer in time, or
 * refused the statement for a reason that passes (a restart, too many connections, a deadlock): the same
 * call may succeed later. A write that failed so may or may not have been applied.
 */
export function isRetryablePostgresError(error: unknown): boolean {
  for (let e = error, depth = 0; e && depth < 6; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code !== 'string') continue;
    if (UNREACHABLE.has(code) || RETRYABLE_SQLSTATES.has(code) || code.startsWith('08')) return true;
  }
  return false;
}

/** SQLSTATEs meaning "the tables are not there (yet)". */
const NOT_SET_UP = new Set(['42P01', '3F000']);
/**
 * SQLSTATEs for values PostgreSQL cannot store: a NUL character in text (22021, 22P05), a year it refuses, a
 * number beyond its column (22003, e.g. a restored record version above 2^31 - 1).
 */
const UNSTORABLE = new Set(['22021', '22P05', '22008', '22007', '22003']);

/**
 * Every error leaves a store as a KiokuError: Kioku's own pass through, values PostgreSQL refuses become a
 * ValidationError (nothing was written: the statement failed), anything else a StorageError with the cause.
 * Messages never carry drizzle's query text (which would include the parameters, i.e. user data).
 */
export function toKiokuError(error: unknown, schema: string): Error {
  if (isKiokuError(error)) return error;
  const pg = serverError(error);
  if (pg && NOT_SET_UP.has(pg.code)) {
    return new StorageError(
      `Kioku's tables are missing in schema "${schema}": call setup() once before using the store (${pg.message}).`,
      { cause: error, details: { code: pg.code, schema } },
    );
  }
  if (pg && UNSTORABLE.has(pg.code)) {
    return new ValidationError(`PostgreSQL cannot store this value: ${pg.message}`, {
      cause: error,
      details: { code: pg.code },
    });
  }
  const retryable = isRetryablePostgresError(error);
  if (pg) {
    return new StorageError(`PostgreSQL error ${pg.code}: ${pg.message}`, {
      cause: error,
      retryable,
      details: { code: pg.code },
    });
  }
  let root = error;
  while (root instanceof Error && root.cause instanceof Error) root = root.cause;
  const message = root instanceof Error ? root.message : String(root);
  if (retryable) {
    const code = (root as { code?: unknown }).code;
    return new StorageError(
      `PostgreSQL did not answer (${message.slice(0, 300)}): the server is down, restarting or overloaded, or the call passed its deadline. Nothing is lost that was acknowledged; retry the call (a write may or may not have been applied).`,
      { cause: error, retryable, details: { ...(typeof code === 'string' ? { code } : {}) } },
    );
  }
  return new StorageError(`PostgreSQL store failed: ${message.slice(0, 500)}`, { cause: error });
}
