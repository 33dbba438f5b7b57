import { redactUrl } from '@kioku/core/adapter';
import { UsageError } from './errors.js';

export function parseUrl(input: string): URL {
  try {
    return new URL(input);
  } catch {
    throw new UsageError(`"${redactUrl(input)}" is not a valid URL.`);
  }
}

/** The URL without its secrets (`user:***@`, `?password=***`: core's `redactUrl`), so it can be printed. */
export function redact(url: URL): string {
  return redactUrl(url.toString());
}
