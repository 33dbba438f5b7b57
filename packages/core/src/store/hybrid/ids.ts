import { createHash } from 'node:crypto';
import { LIMITS } from '../../foundation/limits.js';

/**
 * The vector id of a record (or a document chunk): `{prefix}.{parts joined by .}`, one prefix per kind
 * (`f` facts, `d` document chunks, `x` details, `t` transcript entries) so ids of different kinds never
 * collide in one partition of the index. Past the id length limit, and for transcript entries (which
 * have no id), `{prefix}_{sha-256 prefix}`: `_` cannot follow the prefix otherwise, so the two forms
 * never meet. The record's own id travels in the payload; vector ids are never parsed back.
 */
export function vectorId(prefix: string, ...parts: Array<string | number>): string {
  const raw = `${prefix}.${parts.join('.')}`;
  return raw.length <= LIMITS.idChars ? raw : hashedVectorId(prefix, raw);
}

export function hashedVectorId(prefix: string, text: string): string {
  return `${prefix}_${createHash('sha256').update(text).digest('hex').slice(0, 40)}`;
}
