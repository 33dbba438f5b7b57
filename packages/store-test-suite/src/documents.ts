import type { KnowledgeDocument, Scope } from '@kioku/core';
import { type DocumentInput, type DocumentStore, InMemoryDocumentStore, LIMITS } from '@kioku/core/store';
import { describe, expect, it } from 'vitest';
import { DOCUMENT_FIXTURE, HANDBOOK, HANDBOOK_TEXT } from './fixtures.js';
import { type StoreHarness, useHarness } from './harness.js';
import {
  expectKiokuError,
  expectNewRevisions,
  HOSTILE_IDS,
  isoNow,
  label,
  randomId,
  randomScope,
  sized,
  times,
} from './helpers.js';
import { snapshotTests } from './snapshot.js';
import { textDomainTests } from './text-domain.js';

const words = (text: string) => text.toLowerCase().match(/[a-z0-9]+/g) ?? [];

/** Conformance tests for a DocumentStore. */
export function documentStoreSuite(h: StoreHarness<DocumentStore>): void {
  describe(`DocumentStore conformance: ${h.name}`, () => {
    const fx = useHarness(h);

    describe('one text domain on every backend', () => {
      textDomainTests(fx, [
        {
          field: 'document title',
          write: (s, scope, text) => s.create(scope, { title: text, text: 'body' }),
          read: async (s, scope) => (await s.snapshot({ userId: scope.userId })).records[0]?.title,
        },
        {
          field: 'document text',
          write: (s, scope, text) => s.create(scope, { title: 't', text }),
          read: async (s, scope) => (await s.snapshot({ userId: scope.userId })).records[0]?.text,
        },
      ]);
    });

    const addFixture = async (scope: Scope): Promise<KnowledgeDocument[]> => {
      const docs: KnowledgeDocument[] = [];
      for (const doc of DOCUMENT_FIXTURE) {
        docs.push(await fx.store.create(scope, { ...doc, tags: [...doc.tags] }));
        await fx.tick();
      }
      docs.push(await fx.store.create(scope, { title: HANDBOOK.title, text: HANDBOOK_TEXT, tags: ['hr'] }));
      return docs;
    };

    describe('create, get, list, delete', () => {
      it('creates a document with defaults, measured and split into chunks', async () => {
        const scope = randomScope();
        const doc = await fx.store.create(scope, { title: HANDBOOK.title, text: HANDBOOK_TEXT });
        expect(doc).toMatchObject({
          userId: scope.userId,
          title: HANDBOOK.title,
          text: HANDBOOK_TEXT,
          tags: [],
          source: { type: 'text' },
          metadata: {},
        });
        if (fx.caps.controllableClock) expect(doc.addedAt).toBe(isoNow(fx.ctx.clock));
        expect(doc.tokenCount).toBeGreaterThan(100);
        expect(doc.chunks.length).toBeGreaterThan(0);
        doc.chunks.forEach((chunk, i) => {
          expect(chunk.index).toBe(i);
          expect(chunk.text.trim()).not.toBe('');
          expect(chunk.tokenCount).toBeGreaterThan(0);
        });
        const chunked = new Set(words(doc.chunks.map((c) => c.text).join(' ')));
        expect(words(HANDBOOK_TEXT).filter((w) => !chunked.has(w))).toEqual([]);
        expect(await fx.store.get(scope, doc.id)).toEqual(doc);
        expect((await fx.store.snapshot({ userId: scope.userId })).records).toEqual([doc]);
      });

      it('stores every given field', async () => {
        const scope = randomScope({ agent: true });
        const input = {
          id: randomId('doc'),
          title: 'Spec',
          text: 'The widget must be blue.',
          description: 'Product spec',
          tags: ['spec', 'widgets'],
          source: { type: 'file' as const, uri: '/tmp/spec.md', mimeType: 'text/markdown' },
          metadata: { pages: 1 },
        };
        const doc = await fx.store.create(scope, input);
        expect(doc).toMatchObject({ ...input, userId: scope.userId, agentId: scope.agentId });
        expect(await fx.store.get(scope, input.id)).toEqual(doc);
      });

      it('lists oldest first', async () => {
        const scope = randomScope();
        const docs = await addFixture(scope);
        expect(await fx.store.list(scope)).toEqual(docs);
      });

      it('get of a missing id is null; delete is true once, then false', async () => {
        const scope = randomScope();
        const [first, second] = await addFixture(scope);
        expect(await fx.store.get(scope, randomId('missing'))).toBeNull();
        expect(await fx.store.delete(scope, first!.id)).toBe(true);
        expect(await fx.store.delete(scope, first!.id)).toBe(false);
        expect(await fx.store.get(scope, first!.id)).toBeNull();
        expect((await fx.store.list(scope)).map((d) => d.id)).not.toContain(first!.id);
        expect(await fx.store.get(scope, second!.id)).toEqual(second);
        const hits = await fx.store.search(scope, { query: 'refund purchase' });
        expect(hits.map((hit) => hit.documentId)).not.toContain(first!.id);
      });

      it('a duplicate explicit id is a CONFLICT and keeps the original', async () => {
        const scope = randomScope();
        const id = randomId('doc');
        const original = await fx.store.create(scope, { id, title: 'Original', text: 'first text' });
        await expectKiokuError(fx.store.create(scope, { id, title: 'Impostor', text: 'other' }), 'CONFLICT');
        expect(await fx.store.list(scope)).toEqual([original]);
      });

      it('the same explicit id may exist in another user’s partition', async () => {
        const id = randomId('doc');
        const a = randomScope();
        const b = randomScope();
        await fx.store.create(a, { id, title: 'A', text: 'of A' });
        await fx.store.create(b, { id, title: 'B', text: 'of B' });
        expect((await fx.store.get(a, id))?.text).toBe('of A');
        expect((await fx.store.get(b, id))?.text).toBe('of B');
      });
    });

    describe('revision', () => {
      it('when the store has one, every write to the scope changes it, from this or another connection', async () => {
        if (!fx.store.revision) return;
        const scope = randomScope();
        const other = randomScope();
        // A harness without twins (one process only) writes through the one store.
        const twin = h.createTwin ? await fx.twin() : fx.store;
        const next = expectNewRevisions([fx.store, twin], scope);
        await next();
        const a = await fx.store.create(scope, { title: 'Tea', text: 'Ann drinks tea.' });
        await next();
        await twin.create(scope, { title: 'Car', text: 'Ann drives a red car.' });
        await next();
        await twin.delete(scope, a.id);
        await next();
        await fx.store.create(scope, { id: a.id, title: 'Tea', text: 'Ann drinks tea.' });
        await next();
        // Unchanged while nothing is written, whatever another user writes; a failed write changes nothing.
        const before = await fx.store.revision!(scope);
        expect(await fx.store.revision!(scope)).toBe(before);
        await fx.store.create(other, { title: 'Cello', text: 'Bo plays the cello.' });
        expect(await fx.store.delete(scope, 'missing')).toBe(false);
        expect(await fx.store.revision!(scope)).toBe(before);
      });

      it('when the store has one, it never reads as an earlier value after eraseUser or a restore', async () => {
        if (!fx.store.revision) return;
        const scope = randomScope();
        const next = expectNewRevisions([fx.store], scope);
        await next();
        await fx.store.create(scope, { id: 'tea', title: 'Tea', text: 'Ann drinks tea.' });
        await next();
        const snapshot = await fx.store.snapshot({ userId: scope.userId });
        await fx.store.eraseUser(scope.userId);
        await next();
        await fx.store.restore(snapshot);
        await next();
        await fx.store.eraseUser(scope.userId);
        await next();
        await fx.store.create(scope, { id: 'tea', title: 'Tea', text: 'Ann drinks tea.' });
        await next();
      });
    });

    describe('search', () => {
      const cases: Array<[string, string, string]> = [
        ['how long do refunds take', 'Refund policy', 'refund'],
        ['express delivery time', 'Shipping', 'express delivery'],
        ['when is support open', 'Office hours', 'Support is open'],
        ['how many weeks of parental leave', HANDBOOK.title, 'Parental leave is 16 weeks'],
        ['password length multi-factor authentication', HANDBOOK.title, 'Passwords must be'],
      ];
      for (const [query, title, phrase] of cases) {
        it(`"${query}" returns the relevant chunk first`, async () => {
          const scope = randomScope();
          const docs = await addFixture(scope);
          const hits = await fx.store.search(scope, { query });
          const top = hits[0];
          expect(top?.title).toBe(title);
          expect(top?.chunk.text).toContain(phrase);
          const doc = docs.find((d) => d.id === top?.documentId);
          expect(doc?.title).toBe(title);
          expect(doc?.chunks[top!.chunk.index]).toEqual(top?.chunk);
          for (let i = 1; i < hits.length; i++)
            expect(hits[i - 1]!.score).toBeGreaterThanOrEqual(hits[i]!.score);
        });
      }

      it('applies the tags filter and the limit', async () => {
        const scope = randomScope();
        await addFixture(scope);
        const hits = await fx.store.search(scope, { query: 'days', tags: ['logistics'] });
        expect(hits.length).toBeGreaterThan(0);
        expect(hits.every((hit) => hit.title === 'Shipping')).toBe(true);
        const refund = await fx.store.search(scope, { query: 'refund', tags: ['logistics'] });
        expect(refund.every((hit) => hit.title === 'Shipping')).toBe(true);
        expect(await fx.store.search(scope, { query: 'days week year', limit: 1 })).toHaveLength(1);
      });

      it('finds nothing in an empty scope', async () => {
        expect(await fx.store.search(randomScope(), { query: 'refund' })).toEqual([]);
      });
    });

    describe('combinedText', () => {
      it('joins every document oldest first within the budget', async () => {
        const scope = randomScope();
        const docs = await addFixture(scope);
        const all = await fx.store.combinedText(scope, 100_000);
        expect(all.truncated).toBe(false);
        expect(all.documentIds).toEqual(docs.map((d) => d.id));
        const positions = docs.map((d) => all.text.indexOf(`## ${d.title}`));
        expect(positions.every((p) => p >= 0)).toBe(true);
        expect([...positions].sort((x, y) => x - y)).toEqual(positions);
        for (const d of docs) expect(all.text).toContain(d.text);
        expect(all.tokenCount).toBeGreaterThan(0);
        expect(all.tokenCount).toBeLessThanOrEqual(100_000);
      });

      it('cuts at the budget and says so', async () => {
        const scope = randomScope();
        const docs = await addFixture(scope);
        const cut = await fx.store.combinedText(scope, 30);
        expect(cut.truncated).toBe(true);
        expect(cut.tokenCount).toBeGreaterThan(0);
        expect(cut.tokenCount).toBeLessThanOrEqual(30);
        expect(cut.documentIds[0]).toBe(docs[0]!.id);
        expect(cut.text.length).toBeLessThan(docs.map((d) => d.text).join('').length);
        const none = await fx.store.combinedText(scope, 0);
        expect(none).toMatchObject({ text: '', tokenCount: 0, documentIds: [], truncated: true });
      });

      it('is empty for a scope without documents', async () => {
        const empty = await fx.store.combinedText(randomScope(), 1000);
        expect(empty).toEqual({ text: '', tokenCount: 0, documentIds: [], truncated: false });
      });
    });

    describe('scope isolation', () => {
      it('user B never sees user A’s documents', async () => {
        const a = randomScope();
        const b = randomScope();
        const docs = await addFixture(a);
        const own = await fx.store.create(b, { title: 'B notes', text: 'Notes that belong to B only.' });
        expect(await fx.store.get(b, docs[0]!.id)).toBeNull();
        expect(await fx.store.list(b)).toEqual([own]);
        const found = await fx.store.search(b, { query: 'refund shipping parental leave', limit: 100 });
        expect(found.every((hit) => hit.documentId === own.id)).toBe(true);
        const combined = await fx.store.combinedText(b, 100_000);
        expect(combined.documentIds).toEqual([own.id]);
        expect(combined.text).not.toContain('Refund');
        expect(await fx.store.delete(b, docs[0]!.id)).toBe(false);
        expect(await fx.store.list(a)).toEqual(docs);
      });

      it('the same user with another agent is another partition', async () => {
        const user = randomScope();
        const agent = { ...user, agentId: randomId('agent') };
        const shared = await fx.store.create(user, { title: 'Plain', text: 'Knowledge without an agent.' });
        const mine = await fx.store.create(agent, { title: 'Agent', text: 'Knowledge of the agent.' });
        expect(await fx.store.list(user)).toEqual([shared]);
        expect(await fx.store.list(agent)).toEqual([mine]);
        expect(await fx.store.get(agent, shared.id)).toBeNull();
        expect((await fx.store.search(user, { query: 'knowledge' })).map((hit) => hit.documentId)).toEqual([
          shared.id,
        ]);
      });
    });

    describe('hostile ids are refused with VALIDATION and change nothing', () => {
      for (const bad of HOSTILE_IDS) {
        it(label(bad), async () => {
          const scope = randomScope({ agent: true });
          const kept = await fx.store.create(scope, { title: 'Keep', text: 'keep me' });
          const s = fx.store;
          await expectKiokuError(s.get(scope, bad), 'VALIDATION');
          await expectKiokuError(s.delete(scope, bad), 'VALIDATION');
          await expectKiokuError(s.create(scope, { id: bad, title: 'x', text: 'x' }), 'VALIDATION');
          for (const hostile of [{ userId: bad }, { userId: scope.userId, agentId: bad }]) {
            await expectKiokuError(s.create(hostile, { title: 'x', text: 'x' }), 'VALIDATION');
            await expectKiokuError(s.get(hostile, kept.id), 'VALIDATION');
            await expectKiokuError(s.list(hostile), 'VALIDATION');
            await expectKiokuError(s.delete(hostile, kept.id), 'VALIDATION');
            await expectKiokuError(s.search(hostile, { query: 'keep' }), 'VALIDATION');
            await expectKiokuError(s.combinedText(hostile, 100), 'VALIDATION');
          }
          expect(await s.list(scope)).toEqual([kept]);
        });
      }
    });

    describe('bad input is refused with VALIDATION and changes nothing', () => {
      const badInputs: Array<[string, unknown]> = [
        ['empty text', { title: 't', text: '' }],
        ['non-string text', { title: 't', text: { pages: [] } }],
        ['missing title', { text: 'x' }],
        ['blank title', { title: '   ', text: 'x' }],
        ['text over the limit', { title: 't', text: sized(LIMITS.documentTextChars + 1) }],
        [
          'too many tags',
          { title: 't', text: 'x', tags: Array.from({ length: LIMITS.tagCount + 1 }, (_, i) => `t${i}`) },
        ],
        ['unknown source type', { title: 't', text: 'x', source: { type: 'carrier-pigeon' } }],
      ];
      for (const [name, input] of badInputs) {
        it(`create: ${name}`, async () => {
          const scope = randomScope();
          const kept = await fx.store.create(scope, { title: 'Keep', text: 'keep me' });
          await expectKiokuError(fx.store.create(scope, input as DocumentInput), 'VALIDATION');
          expect(await fx.store.list(scope)).toEqual([kept]);
        });
      }

      it('bad queries and budgets', async () => {
        const scope = randomScope();
        await fx.store.create(scope, { title: 'Keep', text: 'keep me' });
        await expectKiokuError(fx.store.search(scope, { query: '' }), 'VALIDATION');
        await expectKiokuError(fx.store.search(scope, { query: sized(LIMITS.queryChars + 1) }), 'VALIDATION');
        await expectKiokuError(fx.store.search(scope, { query: 'x', limit: 0 }), 'VALIDATION');
        await expectKiokuError(fx.store.combinedText(scope, -1), 'VALIDATION');
        await expectKiokuError(fx.store.combinedText(scope, 1.5), 'VALIDATION');
      });
    });

    describe('concurrent writes lose nothing', () => {
      it('50 concurrent creates are all listed', async () => {
        const scope = randomScope();
        const added = await times(50, (i) =>
          fx.store.create(scope, { title: `Doc ${i}`, text: `Text number ${i}.` }),
        );
        const listed = await fx.store.list(scope);
        expect(listed).toHaveLength(50);
        expect(new Set(listed.map((d) => d.id))).toEqual(new Set(added.map((d) => d.id)));
      });

      it.skipIf(!h.createTwin)('two instances over the same storage, interleaved', async () => {
        const scope = randomScope();
        const twin = await fx.twin();
        const stores = [fx.store, twin];
        await times(50, (i) =>
          stores[i % 2]!.create(scope, { title: `Doc ${i}`, text: `Text number ${i}.` }),
        );
        expect(await fx.store.list(scope)).toHaveLength(50);
        expect(await twin.list(scope)).toHaveLength(50);
      });
    });

    snapshotTests(fx, {
      kind: 'documents',
      scope: () => randomScope({ agent: true }),
      reference: (ctx) => new InMemoryDocumentStore({ clock: ctx.clock }),
      async seed(store, scope, f) {
        const user = { userId: scope.userId };
        await store.create(user, {
          title: HANDBOOK.title,
          text: HANDBOOK_TEXT,
          tags: ['hr'],
          metadata: { v: 2 },
        });
        await f.tick();
        await store.create(user, {
          title: 'Spec',
          text: 'The widget must be blue.',
          description: 'Product spec',
          source: { type: 'url', uri: 'https://example.com/spec' },
        });
        await f.tick();
        await store.create(scope, { title: 'Agent notes', text: 'Only for this agent.' });
      },
      async mutate(store, scope) {
        const user = { userId: scope.userId };
        const [first] = await store.list(user);
        await store.delete(user, first!.id);
        await store.create(user, { title: 'Added later', text: 'Not in the snapshot.' });
      },
      view: async (store, scope) => ({
        user: await store.list({ userId: scope.userId }),
        agent: await store.list(scope),
      }),
      userIdOf: (doc) => doc.userId,
      withBadId: (doc) => ({ ...doc, id: 'a:b' }),
    });
  });
}
