import type { ChatMessage, ChatModel, Fact, KiokuStores, Scope } from '@kioku/core';
import { ChangesetLog, enrichMemory, extractAndStoreFacts, findNearDuplicate } from '@kioku/core/passes';
import { describe, expect, it } from 'vitest';
import type { BundleHarness } from './bundle.js';
import { randomScope } from './helpers.js';

/** A model that answers each request with the next scripted JSON (a function is called with the prompt). */
function scripted(replies: unknown[]): ChatModel & { prompts: ChatMessage[][] } {
  const prompts: ChatMessage[][] = [];
  return {
    prompts,
    async complete({ messages }) {
      prompts.push(messages);
      const next = replies.shift();
      if (next === undefined) throw new Error('model script exhausted');
      const reply = typeof next === 'function' ? await next(messages) : next;
      return { role: 'assistant', content: typeof reply === 'string' ? reply : JSON.stringify(reply) };
    },
  };
}

/** The fields a revert restores exactly. */
const exact = (f: Fact) => ({
  id: f.id,
  title: f.title,
  content: f.content,
  category: f.category,
  tags: f.tags,
  metadata: f.metadata,
  provenance: f.provenance,
  createdAt: f.createdAt,
});

const byContent = (a: Fact, b: Fact) => (a.content < b.content ? -1 : a.content > b.content ? 1 : 0);

async function factsOf(stores: KiokuStores, scope: Scope): Promise<Fact[]> {
  return (await stores.facts.list(scope)).sort(byContent);
}

/**
 * The memory passes that write facts — dedup before store, extraction, save_memory's enrichment — on a
 * backend: each decision reads the backend's own search, each changeset is applied with its versions,
 * kept in its session store and reverted from there. The model is scripted; no model server is needed.
 */
export function memoryPassesSuite(h: BundleHarness): void {
  describe(`memory passes: ${h.name}`, () => {
    async function withStores(test: (stores: KiokuStores) => Promise<void>): Promise<void> {
      const stores = await h.create();
      try {
        await stores.setup();
        await test(stores);
      } finally {
        await stores.close();
        await h.destroy?.();
      }
    }

    it('dedup decides skip / update / create over the backend’s search, within the user', () =>
      withStores(async (stores) => {
        const scope = randomScope();
        const other = randomScope();
        const home = await stores.facts.create(scope, { content: 'User lives in Berlin' });
        await stores.facts.create(other, { content: 'User lives in Berlin with partner Sam' });
        expect(await findNearDuplicate(stores.facts, scope, 'I live in Berlin.')).toMatchObject({
          decision: 'skipped',
          similar: { id: home.id },
        });
        expect(
          await findNearDuplicate(stores.facts, scope, 'User lives in Berlin with partner Sam'),
        ).toMatchObject({ decision: 'updated', similar: { id: home.id } });
        expect((await findNearDuplicate(stores.facts, scope, 'User lives in Munich')).decision).toBe(
          'created',
        );
      }));

    it('extraction applies its changeset with provenance, keeps it, and a revert restores every fact', () =>
      withStores(async (stores) => {
        const scope = randomScope();
        const guitar = await stores.facts.create(scope, { content: 'User plays guitar', tags: ['music'] });
        const home = await stores.facts.create(scope, { content: 'User lives in Chicago' });
        const dog = await stores.facts.create(scope, {
          content: "User's dog is named Biscuit",
          metadata: { m: '1' },
        });
        const before = (await factsOf(stores, scope)).map(exact);
        const model = scripted([
          {
            facts: [
              { content: 'User plays guitar in a band', tags: ['band'] },
              { content: 'User moved to Denver' },
              { content: "User's dog Biscuit passed away" },
              { content: 'User has a sister named Ana', category: 'personal/family' },
            ],
          },
          {
            decisions: [
              { fact: 1, event: 'UPDATE', id: home.id, content: 'User lives in Denver', outdated: true },
              { fact: 2, event: 'DELETE', id: dog.id, reason: 'The dog died.' },
              { fact: 3, event: 'ADD' },
            ],
          },
        ]);
        const { changeset, result } = await extractAndStoreFacts({
          stores,
          model,
          scope,
          sessionId: 'session-1',
          turn: 2,
          messages: [
            {
              role: 'user',
              content:
                'News: I play guitar in a band now, I moved to Denver, my dog Biscuit passed away, and I have a sister named Ana.',
            },
          ],
        });
        expect(result?.conflicts).toEqual([]);
        expect(changeset.operations.map((o) => o.op)).toEqual(['create', 'update', 'update', 'delete']);
        const after = await factsOf(stores, scope);
        expect(after.map((f) => f.content)).toEqual([
          'User has a sister named Ana',
          'User lives in Denver',
          'User plays guitar in a band',
        ]);
        expect(after[0]!.provenance).toEqual({ source: 'extraction', sessionId: 'session-1', turn: 2 });
        expect(after.find((f) => f.id === guitar.id)?.tags).toEqual(['music', 'band']);

        const log = new ChangesetLog(stores.sessions);
        expect((await log.list(scope)).map((k) => k.changeset.id)).toEqual([changeset.id]);
        const reverted = await log.revert(stores.facts, scope, changeset.id);
        expect(reverted.conflicts).toEqual([]);
        expect((await factsOf(stores, scope)).map(exact)).toEqual(before);
      }));

    it('extraction never overwrites a fact another process changed while the model worked', () =>
      withStores(async (stores) => {
        const scope = randomScope();
        const guitar = await stores.facts.create(scope, { content: 'User plays guitar' });
        const elsewhere = await h.reopen();
        try {
          await elsewhere.setup();
          const model = scripted([
            { facts: [{ content: 'User has taken guitar lessons since 2020' }] },
            async () => {
              await elsewhere.facts.update(scope, guitar.id, { content: 'User plays guitar and bass' });
              return {
                decisions: [
                  {
                    fact: 1,
                    event: 'UPDATE',
                    id: guitar.id,
                    content: 'User plays guitar and has taken lessons since 2020',
                  },
                ],
              };
            },
          ]);
          const { changeset, result } = await extractAndStoreFacts({
            stores,
            model,
            scope,
            messages: [{ role: 'user', content: "I've taken guitar lessons since 2020." }],
          });
          expect(changeset.status).toBe('partially_applied');
          expect(result?.conflicts.map((c) => [c.op, c.id, c.code])).toEqual([
            ['update', guitar.id, 'CONFLICT'],
          ]);
          expect(await stores.facts.get(scope, guitar.id)).toMatchObject({
            content: 'User plays guitar and bass',
            version: 2,
          });
        } finally {
          await elsewhere.close();
        }
      }));

    it('enrichment replaces a saved memory with linked entries, revertably; an edit in between keeps it', () =>
      withStores(async (stores) => {
        const scope = randomScope();
        const entries = {
          entries: [
            { content: 'User prefers metric units', category: 'user-preferences/units' },
            { content: 'User prefers short answers', category: 'user-preferences/style' },
          ],
        };
        const original = await stores.facts.create(scope, {
          content: 'metric units, short answers',
          provenance: { source: 'assistant', toolName: 'save_memory', sessionId: 'session-1' },
        });
        const { changeset, result } = await enrichMemory({
          stores,
          model: scripted([entries]),
          scope,
          original,
        });
        expect(result?.conflicts).toEqual([]);
        const after = await factsOf(stores, scope);
        expect(after.map((f) => [f.content, f.provenance, f.createdAt])).toEqual(
          entries.entries.map((e) => [
            e.content,
            { source: 'enrichment', sourceIds: [original.id], sessionId: 'session-1' },
            original.createdAt,
          ]),
        );
        await new ChangesetLog(stores.sessions).revert(stores.facts, scope, changeset.id);
        expect((await factsOf(stores, scope)).map(exact)).toEqual([exact(original)]);

        // The user edits the memory while the model expands it: the edit stays, no entry is left.
        const [current] = await stores.facts.list(scope);
        const edited = await enrichMemory({
          stores,
          scope,
          original: current!,
          model: scripted([
            async () => {
              await stores.facts.update(scope, current!.id, { content: 'metric units (user edit)' });
              return entries;
            },
          ]),
        });
        expect(edited.result?.conflicts.map((c) => [c.op, c.code])).toEqual([['delete', 'CONFLICT']]);
        expect((await factsOf(stores, scope)).map((f) => f.content)).toEqual(['metric units (user edit)']);
      }));
  });
}
