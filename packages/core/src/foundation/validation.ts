import type { z } from 'zod';
import { ValidationError } from './errors.js';
import { findTextOutsideDomain } from './text-domain.js';

/**
 * Parse with zod; on failure throw a ValidationError that lists every issue with its path. Every string in
 * the result must lie in Kioku's text domain (see `records/text-domain.ts`).
 */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) {
    const outside = findTextOutsideDomain(result.data);
    if (outside) {
      throw new ValidationError(`Invalid ${what}: ${outside.path}: ${outside.problem}.`, {
        details: { issues: [{ path: outside.path, message: outside.problem }] },
      });
    }
    return result.data;
  }
  const issues = result.error.issues.map((issue) => ({
    path: issue.path.join('.') || '(root)',
    message: issue.message,
  }));
  const summary = issues
    .slice(0, 5)
    .map((i) => `${i.path}: ${i.message}`)
    .join('; ');
  throw new ValidationError(`Invalid ${what}: ${summary}`, { details: { issues } });
}
