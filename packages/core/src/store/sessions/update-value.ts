import { retryOnConflict } from '../../foundation/retry-on-conflict.js';
import type { Scope } from '../../foundation/scope.js';
import type { KvEntry } from './record.js';
import type { SessionStore } from './store.js';

/**
 * Read-modify-write of one session k-v value that loses no concurrent change: reads the key's entry, asks
 * `next` for the new value (null: write nothing) and writes it only while the key is still at the version
 * read (0: still absent); on CONFLICT it reads and asks again. Returns the entry written, or null when
 * `next` wrote nothing. `next` may run more than once, so it must only compute.
 */
export function updateKvValue(
  sessions: SessionStore,
  scope: Scope,
  sessionId: string,
  key: string,
  next: (current: KvEntry | null) => string | null,
): Promise<KvEntry | null> {
  return retryOnConflict(async () => {
    const current = await sessions.kvGet(scope, sessionId, key);
    const value = next(current);
    if (value === null) return null;
    return sessions.kvSet(scope, sessionId, key, value, { expectedVersion: current?.version ?? 0 });
  });
}
