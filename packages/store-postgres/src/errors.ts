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
  if (pg) {
    return new StorageError(`PostgreSQL error ${pg.code}: ${pg.message}`, {
      cause: error,
      details: { code: pg.code },
    });
  }
  let root = error;
  while (root instanceof Error && root.cause instanceof Error) root = root.cause;
  const message = root instanceof Error ? root.message : String(root);
  return new StorageError(`PostgreSQL store failed: ${message.slice(0, 500)}`, { cause: error });
}
