import { createHash } from 'node:crypto';
import type { Scope } from '@kioku/core';

/** Namespace of Kioku's point ids (a fixed random UUID; changing it would orphan every stored point). */
const NAMESPACE = Buffer.from('6b696f6b-75f0-4c6d-9a1e-7665637470a1'.replace(/-/g, ''), 'hex');

/**
 * Qdrant accepts only unsigned integers and UUIDs as point ids. A Kioku point's id is a UUID v5 (SHA-1,
 * RFC 9562) of its user, agent and Kioku id, so the same point always maps to the same Qdrant point (an
 * upsert replaces it) and two users' points with the same Kioku id never collide. The Kioku id itself is
 * kept in the payload (`kioku_id`).
 */
export function pointId(scope: Pick<Scope, 'userId' | 'agentId'>, id: string): string {
  const bytes = createHash('sha1')
    .update(NAMESPACE)
    .update(JSON.stringify([scope.userId, scope.agentId ?? null, id]))
    .digest()
    .subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
