import { z } from 'zod';
import { IdSchema } from './ids.js';
import { LIMITS } from './limits.js';

export const IsoDateSchema = z.iso.datetime({ offset: true });

const CATEGORY_SEGMENT = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/**
 * A hierarchical category such as `user-preferences/timezone` up to 8
 * slash-separated segments of letters, digits and `_ . -`, no empty or `..` segments.
 */
export const CategorySchema = z
  .string()
  .min(1)
  .max(200)
  .refine(
    (value) => {
      const segments = value.split('/');
      return segments.length <= 8 && segments.every((s) => CATEGORY_SEGMENT.test(s) && s !== '..');
    },
    {
      message:
        'must be slash-separated segments of letters, digits and _ . - (e.g. "user-preferences/timezone")',
    },
  );

export const DEFAULT_CATEGORY = 'general';

export const TagSchema = z
  .string()
  .trim()
  .min(1)
  .max(LIMITS.tagChars)
  .regex(/^[^\p{Cc}]+$/u, 'must not contain control characters');

export const TagsSchema = z.array(TagSchema).max(LIMITS.tagCount);

/** Arbitrary JSON metadata, limited in serialized size. */
export const MetadataSchema = z
  .record(z.string().max(200), z.json())
  .refine((value) => JSON.stringify(value).length <= LIMITS.metadataJsonChars, {
    message: `must serialize to at most ${LIMITS.metadataJsonChars} characters of JSON`,
  });

export type Metadata = z.infer<typeof MetadataSchema>;

export const OptionalAgentIdSchema = IdSchema.optional();

/** Text content with a character limit that names itself in the error. */
export function textSchema(maxChars: number, what: string) {
  return z
    .string()
    .min(1, `${what} must not be empty`)
    .max(maxChars, `${what} is larger than the ${maxChars}-character limit`);
}

/** True when `category` equals `prefix` or lies below it in the hierarchy. */
export function categoryMatches(category: string, prefix: string): boolean {
  return category === prefix || category.startsWith(`${prefix}/`);
}

/** True when every tag in `wanted` is present (case-insensitive). */
export function hasAllTags(tags: readonly string[], wanted: readonly string[] | undefined): boolean {
  if (!wanted || wanted.length === 0) return true;
  const have = new Set(tags.map((t) => t.toLowerCase()));
  return wanted.every((t) => have.has(t.toLowerCase()));
}
