import { z } from 'zod';
import { IdSchema } from '../../foundation/ids.js';
import { LIMITS } from '../../foundation/limits.js';
import {
  CategorySchema,
  IsoDateSchema,
  OptionalAgentIdSchema,
  TagsSchema,
} from '../../foundation/record-fields.js';
import { RecordVersionSchema, UpsertOptionsSchema } from '../../foundation/version.js';

const KEY_SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9_.@+-]*$/;

/**
 * A working-memory key is a path like `session/abc123/emails_inbox`. Its first two segments are the
 * namespace (`session/abc123`, `patrol/heartbeat`, `subagent/t1`); at least one more segment names the
 * entry. Segments use letters, digits and `_ . @ + -`, never start with `.` or `-`.
 */
export const WorkingKeySchema = z
  .string()
  .max(512)
  .refine((key) => {
    const segments = key.split('/');
    return (
      segments.length >= 3 &&
      segments.length <= 12 &&
      segments.every((s) => s.length <= 128 && KEY_SEGMENT.test(s))
    );
  }, 'must be a path of at least three segments like "session/abc123/notes" (letters, digits, _ . @ + -)');

/** A key prefix for listing: one or more whole segments (`patrol`, `session/abc123`). */
export const WorkingPrefixSchema = z
  .string()
  .max(512)
  .refine(
    (prefix) => prefix.split('/').every((s) => s.length <= 128 && KEY_SEGMENT.test(s)),
    'must be one or more key segments such as "patrol" or "session/abc123"',
  );

export const WorkingEntrySchema = z.object({
  key: WorkingKeySchema,
  userId: IdSchema,
  agentId: OptionalAgentIdSchema,
  value: z
    .string()
    .max(LIMITS.workingValueChars, `value is larger than the ${LIMITS.workingValueChars}-character limit`),
  storedAt: IsoDateSchema,
  expiresAt: IsoDateSchema,
  category: CategorySchema.optional(),
  tags: TagsSchema,
  /**
   * 1 when the key is set while it has no live entry (first set, or after expiry or delete), one more on
   * every `set` of the live entry.
   */
  version: RecordVersionSchema,
});

export type WorkingEntry = z.infer<typeof WorkingEntrySchema>;

/** An entry without its value — what inventories show. */
export type WorkingEntryInfo = Omit<WorkingEntry, 'value'>;

export const MAX_TTL_MS = 30 * 24 * 60 * 60 * 1000;

export const WorkingSetOptionsSchema = z.object({
  /** Time to live in milliseconds (default: the store's, 5 minutes). At most 30 days. */
  ttlMs: z.number().int().min(1).max(MAX_TTL_MS).optional(),
  category: CategorySchema.optional(),
  tags: TagsSchema.default([]),
  /**
   * Write only if the key's live entry is at this version; 0: only if the key has no live entry (an
   * expired one counts as none). Otherwise ConflictError, and nothing is written.
   */
  expectedVersion: UpsertOptionsSchema.shape.expectedVersion,
});

export type WorkingSetOptions = z.input<typeof WorkingSetOptionsSchema>;

export const WorkingQuerySchema = z.object({
  query: z.string().max(LIMITS.queryChars).optional(),
  category: CategorySchema.optional(),
  tags: z.array(z.string()).max(LIMITS.tagCount).optional(),
  /** Only keys under this prefix (e.g. `patrol/heartbeat`). */
  prefix: WorkingPrefixSchema.optional(),
  limit: z.number().int().min(1).max(1000).default(10),
});

export type WorkingQuery = z.input<typeof WorkingQuerySchema>;

export interface WorkingHit {
  entry: WorkingEntry;
  score: number;
}

/** The root of a key: its first segment (`session`, `patrol`, `subagent`), the unit stores partition by. */
export function keyRootOf(key: string): string {
  return key.split('/', 1)[0]!;
}

/** The namespace of a key: its first two segments. */
export function namespaceOf(key: string): string {
  return key.split('/', 2).join('/');
}

/** True when `key` lies under `prefix` on a segment boundary. */
export function keyHasPrefix(key: string, prefix: string): boolean {
  return key === prefix || key.startsWith(`${prefix}/`);
}
