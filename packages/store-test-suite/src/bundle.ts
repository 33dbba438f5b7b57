import { type KiokuStores, STORE_KINDS } from '@kioku/core';
import { describe, expect, it } from 'vitest';
import { randomScope, randomThreadScope } from './helpers.js';

export interface BundleHarness {
  name: string;
  /** A bundle over empty storage (not yet set up). */
  create(): KiokuStores | Promise<KiokuStores>;
  /** A second bundle over the same storage, as another process would open it. */
  reopen(): KiokuStores | Promise<KiokuStores>;
  /** Remove what `create` made (called after the bundles are closed). */
  destroy?(): void | Promise<void>;
}

/** What every `create*Stores` promises: the six kinds, setup and close that are safe to repeat. */
export function storesBundleSuite(h: BundleHarness): void {
  describe(`KiokuStores bundle: ${h.name}`, () => {
    it('has the six kinds; setup twice, write every kind, reopen and read it back, close twice', async () => {
      const stores = await h.create();
      try {
        for (const kind of STORE_KINDS) expect(stores[kind], kind).toBeTruthy();
        await stores.setup();
        await stores.setup();
        const scope = randomScope();
        const thread = { ...randomThreadScope(), userId: scope.userId };
        const fact = await stores.facts.create(scope, { content: 'Bundles carry every kind' });
        await stores.documents.create(scope, { title: 'Guide', text: 'How bundles work.' });
        await stores.plans.create(thread, { goal: 'Ship the bundle', steps: ['write'] });
        await stores.working.set(scope, 'session/t1/note', 'scratch', { ttlMs: 60_000 });
        const session = await stores.sessions.create(scope);
        await stores.details.create(scope, { content: 'a long tool output', description: 'ls -R output' });

        const again = await h.reopen();
        try {
          await again.setup();
          expect(await again.facts.get(scope, fact.id)).toEqual(fact);
          expect((await again.documents.list(scope)).map((d) => d.title)).toContain('Guide');
          expect((await again.plans.get(thread))?.goal).toBe('Ship the bundle');
          expect((await again.working.get(scope, 'session/t1/note'))?.value).toBe('scratch');
          expect((await again.sessions.list(scope)).map((s) => s.id)).toContain(session.id);
          expect(await again.details.list(scope)).toHaveLength(1);
        } finally {
          await again.close();
        }
      } finally {
        await stores.close();
        await stores.close();
        await h.destroy?.();
      }
    });
  });
}
