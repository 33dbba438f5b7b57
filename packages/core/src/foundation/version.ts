import { z } from 'zod';
import { ConflictError } from './errors.js';
import { parseOrThrow } from './validation.js';

/**
 * Every mutable record carries a version: 1 when it is created, one more on every change. A writer that
 * read a record passes the version it read as `expectedVersion`; a store refuses the write with CONFLICT
 * when the record has changed since, so concurrent writers (two app instances, a background pass and the
 * model's own tool call) never silently overwrite each other. Records stored before versions existed
 * read as version 1.
 */
/** The highest version: versions fit a 32-bit integer column on every backend. */
export const MAX_VERSION = 2_147_483_647;

/** Versions fit a 32-bit integer column on every backend. */
export const VersionSchema = z.number().int().min(1).max(MAX_VERSION);

/** The version field of a record schema: absent in old data means 1. */
export const RecordVersionSchema = VersionSchema.default(1);

export const WriteOptionsSchema = z
  .object({
    /** Refuse the write with CONFLICT unless the stored record still has this version. */
    expectedVersion: VersionSchema.optional(),
  })
  .strict();

/** Options of a write to one existing record (update, delete, plan edits). */
export type WriteOptions = z.input<typeof WriteOptionsSchema>;

/**
 * The expected version of a write that may create its record (working-memory `set`): 0 means "only if
 * there is no record" (create if absent), n means "only if the record is at version n".
 */
export const ExpectedVersionOrAbsentSchema = z.number().int().min(0).max(MAX_VERSION);

/** Options of a write that replaces or creates one record: `expectedVersion` may be 0 (see above). */
export const UpsertOptionsSchema = z
  .object({
    /** Refuse the write with CONFLICT unless the record is at this version (0: unless there is none). */
    expectedVersion: ExpectedVersionOrAbsentSchema.optional(),
  })
  .strict();

export type UpsertOptions = z.input<typeof UpsertOptionsSchema>;

/** Validates write options at the edge (a bad `expectedVersion` is VALIDATION, never a silent skip). */
export function parseWriteOptions(options: WriteOptions | undefined): WriteOptions {
  return options === undefined ? {} : parseOrThrow(WriteOptionsSchema, options, 'write options');
}

/**
 * Throws CONFLICT when `expectedVersion` is given and the stored record's version differs. `what` names the
 * record for the message, e.g. `fact "a1b2"`. An `actual` of 0 means there is no record (where a write may
 * create one, an `expectedVersion` of 0 asks for exactly that).
 */
export function checkVersion(what: string, actual: number, expectedVersion: number | undefined): void {
  if (expectedVersion === undefined || expectedVersion === actual) return;
  const message =
    actual === 0
      ? `The ${what} does not exist (any more); the write expected version ${expectedVersion}: read it again and retry.`
      : expectedVersion === 0
        ? `The ${what} already exists (at version ${actual}); the write expected none: read it and retry.`
        : `The ${what} changed since it was read (it is at version ${actual}, the write expected ${expectedVersion}): read it again and retry.`;
  throw new ConflictError(message, { details: { expectedVersion, actualVersion: actual } });
}
