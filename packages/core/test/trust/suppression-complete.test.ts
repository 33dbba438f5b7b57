import { describe, expect, it } from 'vitest';
import { createInMemoryStores } from '../../src/index.js';
import { forgetUser, SuppressionList } from '../../src/passes.js';

/*
 * The suppression list is complete: it lived in one session's key-value map, one key per forgotten fact,
 * and a session keeps 200 keys (the oldest evicted), so the 201st forget let the first be learnt again.
 */
describe('the suppression list keeps every forgotten fact', () => {
  it('1,000 forgets for one user: all 1,000 stay suppressed, listed and revocable; forgetUser erases the list', async () => {
    const stores = createInMemoryStores();
    const list = new SuppressionList(stores.sessions);
    const texts = Array.from({ length: 1_000 }, (_, i) => `Secret project codename number ${i} is kiwi${i}`);
    for (const [i, text] of texts.entries()) {
      await list.add('alice@example.org', [text], new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString());
    }
    expect(await list.matches('alice@example.org', texts)).toEqual(texts.map(() => true));
    expect(await list.matches('alice@example.org', ['Something never forgotten'])).toEqual([false]);
    expect(await list.matches('bob@example.org', texts.slice(0, 3))).toEqual([false, false, false]);
    const listed = await list.list('alice@example.org');
    expect(listed).toHaveLength(1_000);
    expect(listed[0]!.at).toBe('2026-01-01T00:00:00.000Z');

    expect(await list.revoke('alice@example.org', listed[0]!.hash)).toBe(true);
    expect(await list.revoke('alice@example.org', listed[0]!.hash)).toBe(false);
    expect(await list.matches('alice@example.org', texts.slice(0, 2))).toEqual([false, true]);

    await forgetUser(stores, 'alice@example.org');
    expect(await list.list('alice@example.org')).toEqual([]);
  });

  it('reads lists kept one key per hash (before buckets) and moves them into buckets on the next add', async () => {
    const stores = createInMemoryStores();
    const list = new SuppressionList(stores.sessions);
    const scope = { userId: 'carol' };
    await list.add('carol', ['Old secret kept the old way'], '2026-01-01T00:00:00.000Z');
    const [old] = await list.list('carol');
    // Rewrite it as the earlier layout stored it: one `suppressed/<hash>` key, no bucket.
    const own = (await stores.sessions.list(scope)).find((s) => s.metadata.kioku === 'suppressions')!;
    for (const entry of await stores.sessions.kvList(scope, own.id)) {
      if (entry.key.startsWith('suppressions/')) await stores.sessions.kvDelete(scope, own.id, entry.key);
    }
    await stores.sessions.kvSet(scope, own.id, `suppressed/${old!.hash}`, JSON.stringify(old));
    expect(await list.matches('carol', ['Old secret kept the old way'])).toEqual([true]);

    await list.add('carol', ['A newer secret'], '2026-01-02T00:00:00.000Z');
    const keys = (await stores.sessions.kvList(scope, own.id)).map((e) => e.key);
    expect(keys.filter((k) => k.startsWith('suppressed/'))).toEqual([]);
    expect(await list.matches('carol', ['Old secret kept the old way', 'A newer secret'])).toEqual([
      true,
      true,
    ]);
    expect((await list.list('carol')).map((e) => e.at)).toEqual([
      '2026-01-01T00:00:00.000Z',
      '2026-01-02T00:00:00.000Z',
    ]);
  });
});
