import type { ReadmeExample } from './examples.js';
import { runFailure } from './report.js';
import { runExample } from './run.js';
import { provideServers } from './servers.js';

/** A hung example is killed after this: far above any example's run (the slowest takes seconds). */
export const EXAMPLE_LIMIT_MS = 10 * 60_000;

/**
 * Runs one example with the servers it needs and says why it failed (undefined when it ran). Throws
 * `ServerUnavailableError` when a local server it needs (PostgreSQL, Redis) is not reachable.
 */
export async function checkExample(
  example: ReadmeExample,
  limitMs = EXAMPLE_LIMIT_MS,
): Promise<string | undefined> {
  const servers = await provideServers(example);
  try {
    const result = await runExample(example, { env: servers.env, limitMs });
    return runFailure(example, result, servers.complaints());
  } finally {
    await servers.stop();
  }
}
