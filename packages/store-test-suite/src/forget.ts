import { HashingEmbedder, type KiokuStores, type Scope, STORE_KINDS, withEmbeddings } from '@kioku/core';
import {
  ERASABLE_KINDS,
  type ErasableKind,
  erasureDigest,
  forgetFact,
  forgetSession,
  forgetUser,
  verifyErased,
} from '@kioku/core/passes';
import { InMemoryVectorIndex } from '@kioku/core/store';
import { describe, expect, it } from 'vitest';
import type { BundleHarness } from './bundle.js';
import { randomId } from './helpers.js';

const DIMENSIONS = 64;

/** What `populate` wrote for one user, kind by kind (the ids a receipt must name). */
type Written = Map<ErasableKind, string[]>;

/**
 * Every kind for one user, under no agent and two agents: facts in two categories, a document, a plan,
 * working entries in two namespaces, a conversation with k-v and transcript, one of Kioku's own sessions,
 * an active and a deactivated detail — and, through the hybrid stores, their vectors.
 */
async function populate(stores: KiokuStores, userId: string): Promise<{ written: Written; scopes: Scope[] }> {
  const written: Written = new Map(ERASABLE_KINDS.map((k) => [k, []]));
  const add = (kind: ErasableKind, id: string) => written.get(kind)!.push(id);
  const scopes: Scope[] = [
    { userId },
    { userId, agentId: randomId('agent') },
    { userId, agentId: randomId('agent') },
  ];
  for (const scope of scopes) {
    for (const [content, category] of [
      ['Prefers green tea in the morning', 'food'],
      ['Works on the Kioku project', 'work/projects'],
    ] as const) {
      add('facts', (await stores.facts.create(scope, { content, category })).id);
    }
    add(
      'documents',
      (await stores.documents.create(scope, { title: 'Tea guide', text: 'Green tea brews at 80 degrees.' }))
        .id,
    );
    const threadId = randomId('thread');
    add(
      'plans',
      (await stores.plans.create({ ...scope, threadId }, { goal: 'Brew tea', steps: ['boil'] })).id,
    );
    await stores.working.set(scope, 'notes/tea/brew', 'green tea, 80 degrees');
    await stores.working.set(scope, 'session/t1/draft', 'tea draft');
    add('working', 'notes/tea/brew');
    add('working', 'session/t1/draft');
    const session = await stores.sessions.create(scope);
    await stores.sessions.kvSet(scope, session.id, 'topic', 'tea');
    await stores.sessions.transcriptAppend(scope, session.id, [
      { role: 'user', content: 'What tea do I like?' },
      { role: 'assistant', content: 'Green tea.' },
    ]);
    const own = await stores.sessions.create(scope, { metadata: { kioku: 'changesets' } });
    await stores.sessions.kvSet(scope, own.id, 'changeset/1', '{"ops":[]}');
    add('sessions', session.id);
    add('sessions', own.id);
    const detail = await stores.details.create(scope, {
      content: 'tea shop list: green tea',
      description: 'tea shops',
    });
    const hidden = await stores.details.create(scope, {
      content: 'old tea output',
      description: 'old output',
    });
    await stores.details.deactivate(scope, hidden.id);
    add('details', detail.id);
    add('details', hidden.id);
  }
  if (stores.vectors) {
    written.set(
      'vectors',
      (await stores.vectors.snapshot({ userId })).records.map((r) => r.id),
    );
    expect(written.get('vectors')!.length).toBeGreaterThan(0);
  }
  return { written, scopes };
}

/** `target` with some methods replaced (the others bound to it, so private fields keep working). */
function overriding<T extends object>(target: T, overrides: Partial<T>): T {
  return new Proxy(target, {
    get(t, key) {
      if (Object.hasOwn(overrides, key)) return overrides[key as keyof T];
      const value = Reflect.get(t, key, t);
      return typeof value === 'function' ? value.bind(t) : value;
    },
  });
}

/** Everything stored for a user, every kind and the index, as a comparable value (times included). */
async function everything(stores: KiokuStores, userId: string) {
  const out: Record<string, unknown> = {};
  for (const kind of STORE_KINDS) out[kind] = (await stores[kind].snapshot({ userId })).records;
  if (stores.vectors) out.vectors = (await stores.vectors.snapshot({ userId })).records;
  return out;
}

/** Nothing of the scope comes back through any read: get, list, search, count, categories, the index. */
async function expectNothingReadable(stores: KiokuStores, scope: Scope, written: Written) {
  for (const id of written.get('facts')!) expect(await stores.facts.get(scope, id)).toBeNull();
  expect(await stores.facts.list(scope)).toEqual([]);
  expect(await stores.facts.count(scope)).toBe(0);
  expect(await stores.facts.categories(scope)).toEqual([]);
  expect(await stores.facts.search(scope, { query: 'green tea' })).toEqual([]);
  expect(await stores.facts.search(scope, {})).toEqual([]);
  for (const id of written.get('documents')!) expect(await stores.documents.get(scope, id)).toBeNull();
  expect(await stores.documents.list(scope)).toEqual([]);
  expect(await stores.documents.search(scope, { query: 'green tea' })).toEqual([]);
  expect(await stores.working.list(scope)).toEqual([]);
  expect(await stores.working.get(scope, 'notes/tea/brew')).toBeNull();
  expect(await stores.working.search(scope, { query: 'tea' })).toEqual([]);
  expect(await stores.sessions.list(scope)).toEqual([]);
  for (const id of written.get('sessions')!) expect(await stores.sessions.get(scope, id)).toBeNull();
  for (const id of written.get('details')!) {
    expect(await stores.details.get(scope, id, { includeInactive: true })).toBeNull();
  }
  expect(await stores.details.list(scope, { includeInactive: true })).toEqual([]);
  expect(await stores.details.search(scope, { query: 'tea', includeInactive: true })).toEqual([]);
  if (stores.vectors) {
    expect(await stores.vectors.count(scope)).toBe(0);
    const probe = new Array<number>(stores.vectors.dimensions).fill(1);
    expect(await stores.vectors.search(scope, { vector: probe, limit: 50 })).toEqual([]);
  }
}

/**
 * Verified forgetting on a whole bundle, with hybrid recall on (an in-memory index shared by both
 * instances, so vectors are erased too): `forgetUser` removes every kind of one user across agents and
 * nothing of anyone else; its receipt names what it removed; a re-run, a dry run and a run after a crash
 * half-way all converge; writes racing with it from another instance end up forgotten; `forgetFact` and
 * `forgetSession` cascade through provenance, transcript, k-v and offloaded details.
 */
export function forgetTests(h: BundleHarness): void {
  describe(`verified forgetting: ${h.name}`, () => {
    async function withBundles(body: (a: KiokuStores, b: KiokuStores) => Promise<void>): Promise<void> {
      const index = new InMemoryVectorIndex({ dimensions: DIMENSIONS });
      const embedder = new HashingEmbedder({ dimensions: DIMENSIONS });
      const a = withEmbeddings(await h.create(), { embedder, index });
      let b: KiokuStores | undefined;
      try {
        await a.setup();
        b = withEmbeddings(await h.reopen(), { embedder, index });
        await b.setup();
        await body(a, b);
      } finally {
        await b?.close();
        await a.close();
        await h.destroy?.();
      }
    }

    it('erases every kind of one user across agents, with a receipt; every other user is intact', async () => {
      await withBundles(async (a, b) => {
        const user = randomId('user');
        const others = [randomId('user'), randomId('user')];
        const { written, scopes } = await populate(a, user);
        for (const other of others) await populate(a, other);
        const before = await Promise.all(others.map((o) => everything(a, o)));

        const receipt = await forgetUser(a, user, { backends: { facts: 'test-backend' } });
        expect(receipt).toMatchObject({
          format: 'kioku.erasure-receipt',
          userId: user,
          dryRun: false,
          passes: 1,
        });
        const counts = Object.fromEntries(receipt.removed.map((r) => [r.kind, r.count]));
        for (const kind of ERASABLE_KINDS) expect(counts[kind], kind).toBe(written.get(kind)!.length);
        expect(receipt.total).toBe([...written.values()].reduce((n, ids) => n + ids.length, 0));
        expect(receipt.removed.find((r) => r.kind === 'facts')?.backend).toBe('test-backend');
        expect(receipt.digest).toBe(erasureDigest(written));
        expect(receipt.finishedAt >= receipt.startedAt).toBe(true);

        expect(await verifyErased(a, user)).toEqual({ erased: true });
        expect(await verifyErased(b, user)).toEqual({ erased: true });
        for (const scope of scopes) {
          await expectNothingReadable(a, scope, written);
          await expectNothingReadable(b, scope, written);
        }
        for (const kind of STORE_KINDS)
          expect((await b[kind].snapshot({ userId: user })).records, kind).toEqual([]);
        expect(await Promise.all(others.map((o) => everything(b, o)))).toEqual(before);
      });
    });

    it('a dry run removes nothing and predicts the receipt; a second run finds nothing', async () => {
      await withBundles(async (a) => {
        const user = randomId('user');
        await populate(a, user);
        const stored = await everything(a, user);
        const dry = await forgetUser(a, user, { dryRun: true });
        expect(dry.dryRun).toBe(true);
        expect(await everything(a, user)).toEqual(stored);
        const real = await forgetUser(a, user);
        expect(real.digest).toBe(dry.digest);
        expect(real.total).toBe(dry.total);
        const again = await forgetUser(a, user);
        expect(again.total).toBe(0);
        expect(again.passes).toBe(1);
        expect(await verifyErased(a, user)).toEqual({ erased: true });
      });
    });

    it('after a crash half-way, verifyErased names what is left and running forget again converges', async () => {
      await withBundles(async (a, b) => {
        const user = randomId('user');
        const other = randomId('user');
        const { written } = await populate(a, user);
        await populate(a, other);
        const otherBefore = await everything(a, other);
        // The process died after erasing sessions and details, while erasing documents.
        const crashing: KiokuStores = {
          ...a,
          documents: overriding(a.documents, {
            eraseUser: async () => {
              throw new Error('killed');
            },
          }),
        };
        await expect(forgetUser(crashing, user)).rejects.toThrow('killed');
        const left = await verifyErased(b, user);
        expect(left.erased).toBe(false);
        if (!left.erased) {
          expect(left.left.map((l) => l.kind).sort()).toEqual([
            'documents',
            'facts',
            'plans',
            'vectors',
            'working',
          ]);
          expect(left.left.find((l) => l.kind === 'facts')?.count).toBe(written.get('facts')!.length);
        }
        // Another instance finishes the job.
        const receipt = await forgetUser(b, user);
        expect(Object.fromEntries(receipt.removed.map((r) => [r.kind, r.count]))).toMatchObject({
          sessions: 0,
          details: 0,
          documents: written.get('documents')!.length,
          facts: written.get('facts')!.length,
        });
        expect(await verifyErased(a, user)).toEqual({ erased: true });
        expect(await everything(a, other)).toEqual(otherBefore);
      });
    });

    it('writes of the user racing with forget from another instance end up forgotten', async () => {
      await withBundles(async (a, b) => {
        const user = randomId('user');
        const scope = { userId: user, agentId: randomId('agent') };
        const other = { userId: randomId('user') };
        await populate(a, user);
        const kept = await a.facts.create(other, { content: 'Someone else likes coffee' });
        // The last time forget began scanning facts: every write that finished before it must be gone.
        let lastScan = 0;
        const watched: KiokuStores = {
          ...a,
          facts: overriding(a.facts, {
            snapshot: (selector) => {
              lastScan = performance.now();
              return a.facts.snapshot(selector);
            },
          }),
        };
        let done = false;
        const finished: Array<{ id: string; at: number }> = [];
        const writer = (async () => {
          // A burst, as a conversation still running when the user asks to be forgotten.
          for (let i = 0; !done && i < 12; i++) {
            const fact = await b.facts.create(scope, { content: `Racing fact ${i} about tea` });
            finished.push({ id: fact.id, at: performance.now() });
            await b.working.set(scope, `race/burst/${i}`, 'racing entry');
          }
        })();
        while (finished.length < 2) await new Promise((resolve) => setTimeout(resolve, 1));
        const receipt = await forgetUser(watched, user).finally(() => {
          done = true;
        });
        await writer;
        const survivors = new Set((await a.facts.snapshot({ userId: user })).records.map((f) => f.id));
        const early = finished.filter((w) => w.at < lastScan);
        expect(early.length).toBeGreaterThan(0);
        for (const w of early) expect(survivors.has(w.id), `fact written before the last scan`).toBe(false);
        expect(receipt.passes).toBeGreaterThanOrEqual(1);
        // Once the writer has stopped, forget leaves nothing.
        await forgetUser(b, user);
        expect(await verifyErased(a, user)).toEqual({ erased: true });
        expect(await a.facts.get(other, kept.id)).toEqual(kept);
      });
    });

    it('forgetFact removes the fact, its vector and the facts derived from it, nothing else', async () => {
      await withBundles(async (a) => {
        const scope = { userId: randomId('user'), agentId: randomId('agent') };
        const source = await a.facts.create(scope, { content: 'Likes green tea' });
        const enriched = await a.facts.create(scope, {
          content: 'Likes green tea, especially sencha',
          provenance: { source: 'enrichment', sourceIds: [source.id] },
        });
        const merged = await a.facts.create(scope, {
          content: 'Tea: green, sencha',
          provenance: { source: 'consolidation', sourceIds: [enriched.id] },
        });
        const unrelated = await a.facts.create(scope, { content: 'Lives in Osaka' });
        const elsewhere = await a.facts.create(
          { userId: scope.userId },
          {
            content: 'Derived elsewhere',
            provenance: { source: 'consolidation', sourceIds: [source.id] },
          },
        );
        const result = await forgetFact(a, scope, source.id);
        expect(result.facts.sort()).toEqual([source.id, enriched.id, merged.id].sort());
        expect((await a.facts.list(scope)).map((f) => f.id)).toEqual([unrelated.id]);
        expect(await a.facts.get({ userId: scope.userId }, elsewhere.id)).not.toBeNull();
        const vectorIds = (await a.vectors!.snapshot({ userId: scope.userId })).records
          .filter((r) => r.agentId === scope.agentId)
          .map((r) => r.payload.id);
        expect(vectorIds).toEqual([unrelated.id]);
      });
    });

    it('forgetSession removes its transcript, k-v, plan, offloaded details and extracted facts', async () => {
      await withBundles(async (a) => {
        const scope = { userId: randomId('user') };
        const session = await a.sessions.create(scope);
        const kept = await a.sessions.create(scope);
        await a.sessions.kvSet(scope, session.id, 'topic', 'tea');
        await a.sessions.transcriptAppend(scope, session.id, [{ role: 'user', content: 'I like green tea' }]);
        await a.plans.create({ ...scope, threadId: session.id }, { goal: 'Brew tea' });
        const offloaded = await a.details.create(
          { ...scope, threadId: session.id },
          { content: 'tea shop list', description: 'tea shops' },
        );
        const otherDetail = await a.details.create(
          { ...scope, threadId: kept.id },
          { content: 'x', description: 'y' },
        );
        const extracted = await a.facts.create(scope, {
          content: 'Likes green tea',
          provenance: { source: 'extraction', sessionId: session.id, turn: 0 },
        });
        const stays = await a.facts.create(scope, { content: 'Lives in Osaka' });
        const result = await forgetSession(a, scope, session.id);
        expect(result).toEqual({
          facts: [extracted.id],
          sessions: [session.id],
          plans: [session.id],
          details: [offloaded.id],
        });
        expect(await a.sessions.get(scope, session.id)).toBeNull();
        expect(await a.sessions.kvList(scope, kept.id)).toEqual([]);
        expect(await a.plans.get({ ...scope, threadId: session.id })).toBeNull();
        expect(await a.details.get(scope, offloaded.id, { includeInactive: true })).toBeNull();
        expect(await a.details.get(scope, otherDetail.id)).not.toBeNull();
        expect((await a.facts.list(scope)).map((f) => f.id)).toEqual([stays.id]);
        expect((await a.sessions.list(scope)).map((s) => s.id)).toEqual([kept.id]);
        const left = (await a.vectors!.snapshot({ userId: scope.userId })).records.map((r) => r.payload.id);
        expect(left).not.toContain(offloaded.id);
        expect(left).not.toContain(extracted.id);
      });
    });
  });
}
