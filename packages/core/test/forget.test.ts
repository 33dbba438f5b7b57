import { describe, expect, it } from 'vitest';
import { createInMemoryStores, isKiokuError, KiokuBuilder, type KiokuStores } from '../src/index.js';
import { forgetUser } from '../src/memory/forget/forget-user.js';
import { verifyErased } from '../src/memory/forget/verify.js';

// The conformance suite (store-test-suite's forgetTests) covers erasure on every adapter; these are the
// orchestration's own paths: the facade, giving up, and bad input.
describe('forgetUser', () => {
  it('kioku.privacy.forgetUser waits for queued background work, so that work cannot write after the erasure', async () => {
    const stores = createInMemoryStores();
    const kioku = new KiokuBuilder({ stores }).build();
    kioku.background.enqueue({
      kind: 'extraction',
      scope: { userId: 'alice' },
      run: async () => {
        // Later than an in-memory erasure takes: without the wait, it would write after forget returned.
        await new Promise((resolve) => setTimeout(resolve, 30));
        await stores.facts.create({ userId: 'alice' }, { content: 'Learnt in the background' });
        return undefined;
      },
    });
    const receipt = await kioku.privacy.forgetUser('alice');
    expect(receipt.removed.find((r) => r.kind === 'facts')?.count).toBe(1);
    expect(await kioku.privacy.verifyErased('alice')).toEqual({ erased: true });
  });

  it('gives up with STORAGE naming what is left when every scan finds new records', async () => {
    const stores = createInMemoryStores();
    await stores.facts.create({ userId: 'alice' }, { content: 'Keeps coming back' });
    // A facts store whose erase removes nothing stands for a writer that never stops.
    const stubborn: KiokuStores = {
      ...stores,
      facts: new Proxy(stores.facts, {
        get: (target, key) =>
          key === 'eraseUser'
            ? async () => []
            : (Reflect.get(target, key, target) as (...a: unknown[]) => unknown).bind(target),
      }),
    };
    const error = await forgetUser(stubborn, 'alice', { maxPasses: 2 }).catch((e: unknown) => e);
    expect(isKiokuError(error) && error.code).toBe('STORAGE');
    expect((error as { details: { left: Array<{ kind: string; count: number }> } }).details.left).toEqual([
      { kind: 'facts', count: 1, ids: expect.any(Array) },
    ]);
    const left = await verifyErased(stores, 'alice');
    expect(left.erased).toBe(false);
  });

  it('refuses a bad user id with VALIDATION and removes nothing', async () => {
    const stores = createInMemoryStores();
    await stores.facts.create({ userId: 'alice' }, { content: 'Stays' });
    for (const bad of ['', '../alice', '*']) {
      const error = await forgetUser(stores, bad).catch((e: unknown) => e);
      expect(isKiokuError(error) && error.code).toBe('VALIDATION');
      await expect(verifyErased(stores, bad)).rejects.toMatchObject({ code: 'VALIDATION' });
    }
    expect(await stores.facts.count({ userId: 'alice' })).toBe(1);
  });
});
