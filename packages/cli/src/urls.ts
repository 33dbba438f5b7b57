import { UsageError } from './errors.js';

export function parseUrl(input: string): URL {
  try {
    return new URL(input);
  } catch {
    throw new UsageError(`"${input}" is not a valid URL.`);
  }
}

/** `user:password@` → `user:***@`, so URLs can be printed. */
export function redact(url: URL): string {
  if (!url.password) return url.toString();
  const copy = new URL(url);
  copy.password = '***';
  return copy.toString();
}
