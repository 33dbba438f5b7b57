import { describe, expect, it } from 'vitest';
import { kioku, kiokuInProcess, redisBackend, redisUrl } from './helpers.js';

/*
 * No secret of a store URL is printed: `kioku worker`'s log named `redis://:password@` in clear (its own
 * regex wanted a user name), and a `?password=` query parameter reached stderr. Every printed URL now goes
 * through core's `redactUrl`.
 */
describe('secrets in store URLs are never printed', () => {
  it.skipIf(!redisUrl)('kioku worker on redis://:password@ logs the store with ***', async () => {
    const url = new URL(redisBackend());
    url.password = 's3cret-pw';
    const result = await kioku(['worker', '--store', url.toString(), '--poll', '0.2', '--once'], {
      env: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_API_KEY: 'sk-test' },
    });
    expect(result.stdout).toMatch(/worker \S+ on redis:\/\/:\*\*\*@/);
    expect(result.stdout + result.stderr).not.toContain('s3cret');
  });

  it('an error about a store URL names it without its password or ?password=', async () => {
    for (const store of [
      'postgres://kioku:s3cret-pw@127.0.0.1:1/app?password=s3cret-q',
      'redis://:s3cret-pw@127.0.0.1:1/?password=s3cret-q',
      'postgres://kioku:s3cret-pw@[not a host/app',
    ]) {
      const result = await kiokuInProcess(['export', '--from', store, '--all-users']);
      expect(result.code, store).not.toBe(0);
      expect(result.stdout + result.stderr, store).not.toContain('s3cret');
    }
  });
});
