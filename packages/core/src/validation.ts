import type { z } from 'zod';
import { ValidationError } from './errors.js';

/** Parse with zod; on failure throw a ValidationError that lists every issue with its path. */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
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
