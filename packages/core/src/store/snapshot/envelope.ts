import { z } from 'zod';
import { type Clock, isoAt } from '../../foundation/clock.js';
import { UnsupportedError, ValidationError } from '../../foundation/errors.js';
import { IdSchema } from '../../foundation/ids.js';
import type { SnapshotSelector } from '../../foundation/scope.js';
import { parseOrThrow } from '../../foundation/validation.js';
import type { StoreKind } from '../kinds.js';

export const SNAPSHOT_FORMAT = 'kioku.snapshot';
export const SNAPSHOT_SCHEMA_VERSION = 1;

/**
 * A backend-neutral, versioned export of one store kind. Any adapter restores what any other produced:
 * snapshot JSON, restore into Postgres is a supported migration path.
 */
export interface SnapshotEnvelope<R> {
  format: typeof SNAPSHOT_FORMAT;
  schemaVersion: typeof SNAPSHOT_SCHEMA_VERSION;
  kind: StoreKind;
  createdAt: string;
  /** Whose data this is: one user, or every user (an operator export). */
  selector: SnapshotSelector;
  records: R[];
}

export function makeEnvelope<R>(
  kind: StoreKind,
  selector: SnapshotSelector,
  records: R[],
  clock: Clock,
): SnapshotEnvelope<R> {
  return {
    format: SNAPSHOT_FORMAT,
    schemaVersion: SNAPSHOT_SCHEMA_VERSION,
    kind,
    createdAt: isoAt(clock),
    selector: 'userId' in selector ? { userId: selector.userId } : { allUsers: true },
    records,
  };
}

const HeaderSchema = z.object({
  format: z.literal(SNAPSHOT_FORMAT),
  schemaVersion: z.number().int(),
  kind: z.string(),
});

/**
 * Validate a snapshot completely before anything is written: the header, the version, the kind and
 * every record. An unknown version is an UnsupportedError; anything malformed is a ValidationError.
 */
export function parseEnvelope<R>(
  kind: StoreKind,
  recordSchema: z.ZodType<R>,
  input: unknown,
): SnapshotEnvelope<R> {
  const header = parseOrThrow(HeaderSchema, input, 'snapshot envelope');
  if (header.schemaVersion !== SNAPSHOT_SCHEMA_VERSION) {
    throw new UnsupportedError(
      `Snapshot schemaVersion ${header.schemaVersion} is not supported (this version reads ${SNAPSHOT_SCHEMA_VERSION}).`,
      { details: { schemaVersion: header.schemaVersion } },
    );
  }
  if (header.kind !== kind) {
    throw new ValidationError(`This is a "${header.kind}" snapshot; the ${kind} store cannot restore it.`);
  }
  const schema = z.object({
    format: z.literal(SNAPSHOT_FORMAT),
    schemaVersion: z.literal(SNAPSHOT_SCHEMA_VERSION),
    kind: z.literal(kind),
    createdAt: z.iso.datetime(),
    selector: z.union([
      z.object({ userId: IdSchema }).strict(),
      z.object({ allUsers: z.literal(true) }).strict(),
    ]),
    records: z.array(recordSchema),
  });
  return parseOrThrow(schema, input, `${kind} snapshot`) as SnapshotEnvelope<R>;
}

export interface RestoreOptions {
  /** Only accept records of this user (a ScopeError otherwise) — for restoring a user's own export. */
  userId?: string;
}

export interface RestoreReport {
  records: number;
  partitions: number;
}
