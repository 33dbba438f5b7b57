import {
  conversationHistory,
  factMemory,
  KiokuBuilder,
  type KiokuStores,
  STORE_KINDS,
  workingMemory,
} from '@kioku/core';
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

    it('a turn shows what another process wrote since the last turn, and only its own user’s facts', async () => {
      const stores = await h.create();
      await stores.setup();
      const other = await h.reopen();
      try {
        await other.setup();
        const kioku = new KiokuBuilder({ stores, systemPrompt: 'You are helpful.' })
          .use(factMemory({ facts: stores.facts }))
          .use(workingMemory({ store: stores.working }))
          .use(conversationHistory({ sessions: stores.sessions, maxTurns: 2 }))
          .build();
        const ann = randomScope();
        const bo = randomScope();
        await stores.facts.create(ann, { id: 'f-tea', content: 'Ann drinks green tea' });
        await stores.facts.create(ann, { id: 'f-car', content: 'Ann drives a red car' });
        await stores.facts.create(bo, { id: 'f-tea', content: 'Bo drinks black tea' });
        await stores.facts.create(bo, { id: 'f-car', content: 'Bo rides a bike' });
        const convo = await kioku.startConversation(ann);
        const text = async (c = convo) =>
          (await c.prepare('Hello')).messages.map((m) => m.content).join('\n');
        const first = await text();
        expect(first).toContain('Ann drinks green tea');
        expect(first).toContain('Ann drives a red car');
        await convo.record([
          { role: 'user', content: 'Hello' },
          { role: 'assistant', content: 'Hi Ann' },
        ]);
        // The same again: nothing changed.
        expect(await text()).toContain('Ann drives a red car');

        // Another process adds, edits and forgets facts, saves a working entry and records a turn.
        await other.facts.create(ann, { id: 'f-dog', content: 'Ann has a dog named Rex' });
        await other.facts.update(ann, 'f-tea', { content: 'Ann switched to coffee' });
        await other.facts.delete(ann, 'f-car');
        await other.working.set(convo.scope, `session/${convo.sessionId}/todo`, 'call the vet', {
          ttlMs: 60_000,
        });
        await other.sessions.transcriptAppend(convo.scope, convo.sessionId, [
          { role: 'user', content: 'Typed on the phone' },
          { role: 'assistant', content: 'Noted from the phone' },
        ]);
        const second = await text();
        expect(second).toContain('Ann has a dog named Rex');
        expect(second).toContain('Ann switched to coffee');
        expect(second).not.toContain('green tea');
        expect(second).not.toContain('red car');
        expect(second).toContain(`session/${convo.sessionId}/todo`);
        expect(second).toContain('Noted from the phone');

        // Bo has as many facts, the same ids: his turn shows his own, and Ann's next turn hers.
        const bos = await text(await kioku.startConversation(bo));
        expect(bos).toContain('Bo drinks black tea');
        expect(bos).not.toContain('Ann');
        expect(await text()).toContain('Ann switched to coffee');
      } finally {
        await other.close();
        await stores.close();
        await h.destroy?.();
      }
    });
  });
}
