import { type Clock, UnsupportedError, ValidationError } from '@kioku/core';
import { isoAt, parseEnvelope, parseOrThrow, systemClock } from '@kioku/core/adapter';
import { SNAPSHOT_FORMAT, type SnapshotEnvelope } from '@kioku/core/store';
import { z } from 'zod';
import { isKind, KINDS, type Kind, RECORD_SCHEMAS } from './kinds.js';

export const BUNDLE_FORMAT = 'kioku.bundle';
export const BUNDLE_SCHEMA_VERSION = 1;

/** Several kinds' snapshots in one file: what `kioku export` writes and `kioku import` reads. */
export interface Bundle {
  format: typeof BUNDLE_FORMAT;
  schemaVersion: typeof BUNDLE_SCHEMA_VERSION;
  /** When the export was taken (optional in hand-made bundles). */
  createdAt?: string;
  stores: { [K in Kind]?: SnapshotEnvelope<unknown> };
}

export function makeBundle(stores: Bundle['stores'], clock: Clock = systemClock): Bundle {
  return { format: BUNDLE_FORMAT, schemaVersion: BUNDLE_SCHEMA_VERSION, createdAt: isoAt(clock), stores };
}

const BundleSchema = z.object({
  format: z.literal(BUNDLE_FORMAT),
  schemaVersion: z.literal(BUNDLE_SCHEMA_VERSION),
  createdAt: z.iso.datetime().optional(),
  // Strict: a kind this version does not know would otherwise be dropped without a word.
  stores: z.strictObject(Object.fromEntries(KINDS.map((k) => [k, z.unknown().optional()]))),
});

/**
 * Validate a bundle completely — header, version, every envelope and every record, with core's schemas —
 * so an import writes nothing unless all of it is readable. A single store snapshot
 * (`format: "kioku.snapshot"`, what `store.snapshot()` returns) is accepted as a bundle of one kind.
 */
export function parseBundle(input: unknown): Bundle {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new ValidationError(
      'This is not a Kioku bundle: expected a JSON object written by "kioku export".',
    );
  }
  const header = input as { format?: unknown; schemaVersion?: unknown; kind?: unknown };
  if (header.format === SNAPSHOT_FORMAT) {
    const kind = String(header.kind);
    if (!isKind(kind))
      throw new ValidationError(`Unknown snapshot kind "${kind}"; expected one of ${KINDS.join(', ')}.`);
    return makeBundle({ [kind]: parseEnvelope(kind, RECORD_SCHEMAS[kind], input) });
  }
  if (header.format !== BUNDLE_FORMAT) {
    throw new ValidationError(
      `This is not a Kioku bundle: format is ${JSON.stringify(header.format) ?? 'missing'}, expected "${BUNDLE_FORMAT}" (or a "${SNAPSHOT_FORMAT}" envelope).`,
    );
  }
  if (header.schemaVersion !== BUNDLE_SCHEMA_VERSION) {
    throw new UnsupportedError(
      `Bundle schemaVersion ${JSON.stringify(header.schemaVersion)} is not supported: this @kioku/cli reads version ${BUNDLE_SCHEMA_VERSION}. Use a @kioku/cli that matches the one that exported it.`,
      { details: { schemaVersion: header.schemaVersion } },
    );
  }
  const bundle = parseOrThrow(BundleSchema, input, 'bundle');
  const stores: Bundle['stores'] = {};
  for (const kind of KINDS) {
    const envelope = bundle.stores[kind];
    if (envelope !== undefined) stores[kind] = parseEnvelope(kind, RECORD_SCHEMAS[kind], envelope);
  }
  return {
    format: BUNDLE_FORMAT,
    schemaVersion: BUNDLE_SCHEMA_VERSION,
    ...(bundle.createdAt === undefined ? {} : { createdAt: bundle.createdAt }),
    stores,
  };
}
