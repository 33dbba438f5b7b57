import { ValidationError } from '../../foundation/errors.js';
import { keyRootOf } from './record.js';

/**
 * The first key segment Kioku keeps for its own state in working memory (leases, see
 * `lifecycle/lease.ts`). The working-memory tools and prompt blocks never list, read, write or delete
 * under it, so a model cannot take or break a lease.
 */
export const RESERVED_KEY_ROOT = 'kioku';

/** True when a key or key prefix lies under the reserved root (`kioku`, `kioku/…`). */
export function isReservedKey(keyOrPrefix: string): boolean {
  return keyRootOf(keyOrPrefix.trim()) === RESERVED_KEY_ROOT;
}

/** What a tool answers when a model names a reserved key or prefix. */
export function reservedKeyError(keyOrPrefix: string): ValidationError {
  return new ValidationError(
    `"${keyOrPrefix}" is reserved for Kioku's own state; working-memory tools cannot use keys under "${RESERVED_KEY_ROOT}/".`,
    { details: { key: keyOrPrefix } },
  );
}
