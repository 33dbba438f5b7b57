import { describe, expect, it } from 'vitest';
import { createInMemoryStores, isKiokuError, KiokuBuilder, type KiokuStores } from '../src/index.js';
import { forgetUser } from '../src/memory/forget/forget-user.js';
import { verifyErased } from '../src/memory/forget/verify.js';

/** A property of `target` as a proxy hands it out: methods bound to the target (private fields work). */
function bound(target: object, key: string | symbol): unknown {
  const value = Reflect.get(target, key, target) as unknown;
  return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
}

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
        get: (target, key) => (key === 'eraseUser' ? async () => [] : bound(target, key)),
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

describe('verifyErased and a backend’s derived places', () => {
  it('reports what a store’s erasureResidue finds, through the builder’s wrappers (recall signals)', async () => {
    const stores = createInMemoryStores();
    let left = 3;
    const withResidue: KiokuStores = {
      ...stores,
      facts: new Proxy(stores.facts, {
        get: (target, key) =>
          key === 'erasureResidue'
            ? async (userId: string) => (userId === 'alice' ? [{ place: 'term_stats', count: left }] : [])
            : bound(target, key),
      }),
    };
    const kioku = new KiokuBuilder({ stores: withResidue }).build();
    expect(await kioku.privacy.verifyErased('alice')).toEqual({
      erased: false,
      left: [{ kind: 'facts', count: 3, ids: [], place: 'term_stats' }],
    });
    expect(await verifyErased(withResidue, 'bob')).toEqual({ erased: true });
    left = 0;
    expect(await kioku.privacy.verifyErased('alice')).toEqual({ erased: true });
  });
});
