import { isKiokuError } from './errors.js';

/** Attempts before a CONFLICT is passed on: each one lost means another writer's change went in. */
export const MAX_CONFLICT_ATTEMPTS = 50;

/**
 * Run a read-then-write-with-the-version-read `attempt` until it does not meet CONFLICT: every retry reads
 * again, so no concurrent change is overwritten. After `MAX_CONFLICT_ATTEMPTS` the last CONFLICT is thrown;
 * any other error at once.
 */
export async function retryOnConflict<T>(attempt: () => Promise<T>): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      if (!isKiokuError(error, 'CONFLICT') || n >= MAX_CONFLICT_ATTEMPTS) throw error;
    }
  }
}
