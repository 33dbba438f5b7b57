import type { Scope } from '@kioku/core';
import { type DetailInput, type DetailStore, InMemoryDetailStore, LIMITS } from '@kioku/core/store';
import { describe, expect, it } from 'vitest';
import { HANDBOOK_TEXT } from './fixtures.js';
import { type StoreHarness, useHarness } from './harness.js';
import {
  expectKiokuError,
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

const OUTPUTS = {
  ls: {
    type: 'command_output',
    description: 'ls -la of the repo',
    content: 'total 48\ndrwxr-xr-x src\n-rw-r--r-- package.json',
  },
  weather: {
    description: 'Weather API response',
    content: '{"city":"Chicago","forecast":"thunderstorms","temp":18}',
  },
  search: {
    description: 'Web search for flights',
    content: 'Cheapest flight to Lisbon in October: TAP, 420 euros',
  },
  prefs: {
    type: 'user_preference',
    description: 'Seat preference',
    content: 'The user always wants an aisle seat',
  },
} satisfies Record<string, DetailInput>;

/** Conformance tests for a DetailStore. */
export function detailStoreSuite(h: StoreHarness<DetailStore>): void {
  describe(`DetailStore conformance: ${h.name}`, () => {
    const fx = useHarness(h);

    describe('one text domain on every backend', () => {
      textDomainTests(fx, [
        {
          field: 'detail content',
          write: (s, scope, text) => s.create(scope, { description: 'output', content: text }),
          read: async (s, scope) => (await s.snapshot({ userId: scope.userId })).records[0]?.content,
        },
        {
          field: 'detail description',
          write: (s, scope, text) => s.create(scope, { description: text, content: 'c' }),
          read: async (s, scope) => (await s.snapshot({ userId: scope.userId })).records[0]?.description,
        },
      ]);
    });
    const ids = async (scope: Scope, options?: Parameters<DetailStore['list']>[1]) =>
      (await fx.store.list(scope, options)).map((d) => d.id);

    const seed = async (scope: Scope) => {
      const out: Record<string, string> = {};
      for (const [key, input] of Object.entries(OUTPUTS)) {
        out[key] = (await fx.store.create(scope, input)).id;
        await fx.tick();
      }
      return out as Record<keyof typeof OUTPUTS, string>;
    };

    describe('create and get', () => {
      it('stores content with defaults and a measured token count', async () => {
        const scope = randomScope({ agent: true, thread: true });
        const detail = await fx.store.create(scope, { description: 'Handbook dump', content: HANDBOOK_TEXT });
        expect(detail).toMatchObject({
          userId: scope.userId,
          agentId: scope.agentId,
          threadId: scope.threadId,
          type: 'tool_output',
          description: 'Handbook dump',
          content: HANDBOOK_TEXT,
          metadata: {},
          active: true,
        });
        expect(detail.tokenCount).toBeGreaterThan(100);
        expect(detail.tokenCount).toBeLessThan(HANDBOOK_TEXT.length);
        if (fx.caps.controllableClock) expect(detail.createdAt).toBe(isoNow(fx.ctx.clock));
        expect(await fx.store.get(scope, detail.id)).toEqual(detail);
        expect((await fx.store.snapshot({ userId: scope.userId })).records).toEqual([detail]);
      });

      it('stores every given field; token counts grow with the content', async () => {
        const scope = randomScope();
        const input = {
          id: randomId('ref'),
          type: 'command_output',
          description: 'git log',
          summary: 'Three commits by Ana',
          content: 'commit 1\ncommit 2\ncommit 3',
          metadata: { exitCode: 0, ms: 12 },
        };
        const small = await fx.store.create(scope, input);
        expect(small).toMatchObject(input);
        expect(small.tokenCount).toBeGreaterThan(0);
        const big = await fx.store.create(scope, { description: 'big', content: input.content.repeat(50) });
        expect(big.tokenCount).toBeGreaterThan(small.tokenCount * 10);
        expect(await fx.store.get(scope, input.id)).toEqual(small);
      });

      it('get of a missing id is null', async () => {
        const scope = randomScope();
        await seed(scope);
        expect(await fx.store.get(scope, randomId('missing'))).toBeNull();
        expect(await fx.store.get(scope, randomId('missing'), { includeInactive: true })).toBeNull();
      });

      it('a duplicate explicit id is a CONFLICT and keeps the original', async () => {
        const scope = randomScope();
        const id = randomId('ref');
        const original = await fx.store.create(scope, { id, description: 'first', content: 'original' });
        await expectKiokuError(
          fx.store.create(scope, { id, description: 'second', content: 'impostor' }),
          'CONFLICT',
        );
        await expectKiokuError(
          fx.store.create(
            { ...scope, agentId: randomId('agent') },
            { id, description: 'third', content: 'x' },
          ),
          'CONFLICT',
        );
        expect(await fx.store.get(scope, id)).toEqual(original);
        expect(await ids(scope)).toEqual([id]);
      });

      it('the same explicit id may exist for another user', async () => {
        const id = randomId('ref');
        const a = randomScope();
        const b = randomScope();
        await fx.store.create(a, { id, description: 'a', content: 'of A' });
        await fx.store.create(b, { id, description: 'b', content: 'of B' });
        expect((await fx.store.get(a, id))?.content).toBe('of A');
        expect((await fx.store.get(b, id))?.content).toBe('of B');
      });
    });

    describe('list', () => {
      it('is newest first, with filters and a limit', async () => {
        const user = randomScope();
        const t1 = { ...user, agentId: 'agent-1', threadId: 'thread-1' };
        const t2 = { ...user, agentId: 'agent-2', threadId: 'thread-2' };
        const a = await fx.store.create(t1, OUTPUTS.ls);
        await fx.tick();
        const b = await fx.store.create(t2, OUTPUTS.weather);
        await fx.tick();
        const c = await fx.store.create(t1, OUTPUTS.prefs);
        expect(await ids(user)).toEqual([c.id, b.id, a.id]);
        expect(await ids(user, { limit: 2 })).toEqual([c.id, b.id]);
        expect(await ids(user, { threadId: 'thread-1' })).toEqual([c.id, a.id]);
        expect(await ids(user, { agentId: 'agent-2' })).toEqual([b.id]);
        expect(await ids(user, { type: 'tool_output' })).toEqual([b.id]);
        expect(await ids(user, { type: 'command_output', threadId: 'thread-2' })).toEqual([]);
      });
    });

    describe('deactivate', () => {
      it('hides a record from get, list and search, but includeInactive still returns it', async () => {
        const scope = randomScope();
        const seeded = await seed(scope);
        expect(await fx.store.deactivate(scope, seeded.weather)).toBe(true);
        expect(await fx.store.deactivate(scope, seeded.weather)).toBe(false);
        expect(await fx.store.deactivate(scope, randomId('missing'))).toBe(false);
        expect(await fx.store.get(scope, seeded.weather)).toBeNull();
        const hidden = await fx.store.get(scope, seeded.weather, { includeInactive: true });
        expect(hidden).toMatchObject({ id: seeded.weather, active: false, content: OUTPUTS.weather.content });
        expect(await ids(scope)).not.toContain(seeded.weather);
        expect(await ids(scope)).toHaveLength(3);
        expect(await ids(scope, { includeInactive: true })).toContain(seeded.weather);
        const active = await fx.store.search(scope, { query: 'weather thunderstorms Chicago', limit: 100 });
        expect(active.map((hit) => hit.detail.id)).not.toContain(seeded.weather);
        expect(active.every((hit) => hit.detail.active)).toBe(true);
        const withInactive = await fx.store.search(scope, {
          query: 'weather thunderstorms Chicago',
          includeInactive: true,
        });
        expect(withInactive[0]?.detail).toEqual(hidden);
      });
    });

    describe('delete and eraseUser', () => {
      it('delete removes a record for good, active or not, only in the caller’s user', async () => {
        const scope = randomScope();
        const other = randomScope();
        const seeded = await seed(scope);
        const theirs = await fx.store.create(other, OUTPUTS.ls);
        await fx.store.deactivate(scope, seeded.weather);
        expect(await fx.store.delete(scope, seeded.weather)).toBe(true);
        expect(await fx.store.delete(scope, seeded.weather)).toBe(false);
        expect(await fx.store.delete(scope, seeded.ls)).toBe(true);
        expect(await fx.store.delete(scope, theirs.id)).toBe(false);
        expect(await fx.store.get(scope, seeded.weather, { includeInactive: true })).toBeNull();
        expect(await ids(scope, { includeInactive: true })).toHaveLength(2);
        const hits = await fx.store.search(scope, { query: 'ls repo package.json', includeInactive: true });
        expect(hits.map((hit) => hit.detail.id)).not.toContain(seeded.ls);
        expect(await fx.store.get(other, theirs.id)).toEqual(theirs);
        expect((await fx.store.snapshot({ userId: scope.userId })).records).toHaveLength(2);
      });

      it('eraseUser removes every record of the user (any agent or thread, inactive too) and returns the ids', async () => {
        const user = randomScope();
        const other = randomScope();
        const made: string[] = [];
        for (const scope of [user, { ...user, agentId: randomId('agent'), threadId: randomId('thread') }]) {
          for (const input of Object.values(OUTPUTS)) made.push((await fx.store.create(scope, input)).id);
        }
        await fx.store.deactivate(user, made[0]!);
        const theirs = await fx.store.create(other, OUTPUTS.ls);
        expect((await fx.store.eraseUser(user.userId)).sort()).toEqual([...made].sort());
        expect(await fx.store.eraseUser(user.userId)).toEqual([]);
        expect(await fx.store.list(user, { includeInactive: true })).toEqual([]);
        expect(await fx.store.search(user, { query: 'weather', includeInactive: true })).toEqual([]);
        expect((await fx.store.snapshot({ userId: user.userId })).records).toEqual([]);
        expect(await fx.store.get(other, theirs.id)).toEqual(theirs);
      });
    });

    describe('search', () => {
      it('ranks the relevant record first', async () => {
        const scope = randomScope();
        const seeded = await seed(scope);
        const cases: Array<[string, keyof typeof OUTPUTS]> = [
          ['flight to Lisbon price', 'search'],
          ['thunderstorms forecast', 'weather'],
          ['aisle seat', 'prefs'],
          ['package.json in the repo', 'ls'],
        ];
        for (const [query, key] of cases) {
          const hits = await fx.store.search(scope, { query });
          expect(hits[0]?.detail.id, query).toBe(seeded[key]);
          expect(hits[0]?.detail).toEqual(await fx.store.get(scope, seeded[key]));
        }
      });

      it('applies filters and the limit', async () => {
        const user = randomScope();
        const a = await fx.store.create(
          { ...user, threadId: 'thread-1' },
          { description: 'log one', content: 'error log' },
        );
        await fx.store.create(
          { ...user, threadId: 'thread-2' },
          { description: 'log two', content: 'error log' },
        );
        await fx.store.create(user, {
          type: 'command_output',
          description: 'log three',
          content: 'error log',
        });
        const inThread = await fx.store.search(user, { query: 'error log', threadId: 'thread-1' });
        expect(inThread.map((hit) => hit.detail.id)).toEqual([a.id]);
        const commands = await fx.store.search(user, { query: 'error', type: 'command_output' });
        expect(commands.map((hit) => hit.detail.description)).toEqual(['log three']);
        expect(await fx.store.search(user, { query: 'error log', limit: 2 })).toHaveLength(2);
      });
    });

    describe('scope isolation', () => {
      it('user B never sees user A’s records', async () => {
        const a = randomScope();
        const b = randomScope();
        const seeded = await seed(a);
        const own = await fx.store.create(b, { description: 'B output', content: 'something of B' });
        expect(await fx.store.get(b, seeded.weather)).toBeNull();
        expect(await fx.store.get(b, seeded.weather, { includeInactive: true })).toBeNull();
        expect(await ids(b, { includeInactive: true })).toEqual([own.id]);
        const found = await fx.store.search(b, { query: 'weather thunderstorms flight Lisbon', limit: 100 });
        expect(found.every((hit) => hit.detail.id === own.id)).toBe(true);
        expect(await fx.store.deactivate(b, seeded.weather)).toBe(false);
        expect((await fx.store.get(a, seeded.weather))?.active).toBe(true);
      });

      it('records are per user: any agent or thread of the same user reads them', async () => {
        const user = randomScope();
        const writer = { ...user, agentId: randomId('agent'), threadId: randomId('thread') };
        const reader = { ...user, agentId: randomId('agent'), threadId: randomId('thread') };
        const detail = await fx.store.create(writer, OUTPUTS.search);
        expect(await fx.store.get(reader, detail.id)).toEqual(detail);
        expect(await fx.store.get(user, detail.id)).toEqual(detail);
        expect(await ids(reader)).toEqual([detail.id]);
        expect((await fx.store.search(reader, { query: 'Lisbon' })).map((hit) => hit.detail.id)).toEqual([
          detail.id,
        ]);
      });
    });

    describe('hostile ids are refused with VALIDATION and change nothing', () => {
      for (const bad of HOSTILE_IDS) {
        it(label(bad), async () => {
          const scope = randomScope({ agent: true, thread: true });
          const kept = await fx.store.create(scope, { description: 'keep', content: 'keep me' });
          const s = fx.store;
          await expectKiokuError(s.get(scope, bad), 'VALIDATION');
          await expectKiokuError(s.deactivate(scope, bad), 'VALIDATION');
          await expectKiokuError(s.create(scope, { id: bad, description: 'x', content: 'x' }), 'VALIDATION');
          const hostiles: Scope[] = [
            { userId: bad },
            { ...scope, agentId: bad },
            { ...scope, threadId: bad },
          ];
          for (const hostile of hostiles) {
            await expectKiokuError(s.create(hostile, { description: 'x', content: 'x' }), 'VALIDATION');
            await expectKiokuError(s.get(hostile, kept.id), 'VALIDATION');
            await expectKiokuError(s.list(hostile), 'VALIDATION');
            await expectKiokuError(s.search(hostile, { query: 'keep' }), 'VALIDATION');
            await expectKiokuError(s.deactivate(hostile, kept.id), 'VALIDATION');
          }
          expect(await s.list(scope)).toEqual([kept]);
        });
      }
    });

    describe('bad input is refused with VALIDATION and changes nothing', () => {
      const badInputs: Array<[string, unknown]> = [
        ['empty content', { description: 'd', content: '' }],
        ['non-string content', { description: 'd', content: ['a'] }],
        ['content over the limit', { description: 'd', content: sized(LIMITS.detailContentChars + 1) }],
        ['missing description', { content: 'x' }],
        ['blank description', { description: '  ', content: 'x' }],
        ['description over 500 characters', { description: sized(501), content: 'x' }],
        ['summary over 8000 characters', { description: 'd', summary: sized(8001), content: 'x' }],
        ['type not snake_case', { type: 'Tool Output', description: 'd', content: 'x' }],
      ];
      for (const [name, input] of badInputs) {
        it(`create: ${name}`, async () => {
          const scope = randomScope();
          const kept = await fx.store.create(scope, { description: 'keep', content: 'keep me' });
          await expectKiokuError(fx.store.create(scope, input as DetailInput), 'VALIDATION');
          expect(await fx.store.list(scope, { includeInactive: true })).toEqual([kept]);
        });
      }

      it('bad queries and list options', async () => {
        const scope = randomScope();
        await fx.store.create(scope, { description: 'keep', content: 'keep me' });
        await expectKiokuError(fx.store.search(scope, { query: '' }), 'VALIDATION');
        await expectKiokuError(fx.store.search(scope, { query: sized(LIMITS.queryChars + 1) }), 'VALIDATION');
        await expectKiokuError(fx.store.list(scope, { limit: 0 }), 'VALIDATION');
        await expectKiokuError(fx.store.list(scope, { threadId: '../x' }), 'VALIDATION');
      });
    });

    describe('concurrent writes lose nothing', () => {
      it('50 concurrent creates are all listed', async () => {
        const scope = randomScope();
        const put = await times(50, (i) =>
          fx.store.create(scope, { description: `out ${i}`, content: `content ${i}` }),
        );
        const listed = await fx.store.list(scope);
        expect(new Set(listed.map((d) => d.id))).toEqual(new Set(put.map((d) => d.id)));
        expect(listed).toHaveLength(50);
      });

      it('concurrent creates and deactivations all apply', async () => {
        const scope = randomScope();
        const first: string[] = [];
        for (let i = 0; i < 20; i++)
          first.push((await fx.store.create(scope, { description: `d${i}`, content: 'x' })).id);
        await Promise.all([
          ...first.map((id) => fx.store.deactivate(scope, id)),
          ...Array.from({ length: 20 }, (_, i) =>
            fx.store.create(scope, { description: `n${i}`, content: 'y' }),
          ),
        ]);
        expect(await fx.store.list(scope)).toHaveLength(20);
        expect(await fx.store.list(scope, { includeInactive: true })).toHaveLength(40);
      });

      it.skipIf(!h.createTwin)('two instances over the same storage, interleaved', async () => {
        const scope = randomScope();
        const twin = await fx.twin();
        const stores = [fx.store, twin];
        await times(50, (i) =>
          stores[i % 2]!.create(scope, { description: `out ${i}`, content: `content ${i}` }),
        );
        expect(await fx.store.list(scope)).toHaveLength(50);
        expect(await twin.list(scope)).toHaveLength(50);
      });
    });

    snapshotTests(fx, {
      kind: 'details',
      scope: () => randomScope({ agent: true, thread: true }),
      reference: (ctx) => new InMemoryDetailStore({ clock: ctx.clock }),
      async seed(store, scope, f) {
        await store.create(scope, {
          ...OUTPUTS.ls,
          summary: 'a src dir and package.json',
          metadata: { exitCode: 0 },
        });
        await f.tick();
        const weather = await store.create({ userId: scope.userId }, OUTPUTS.weather);
        await f.tick();
        await store.create(scope, OUTPUTS.prefs);
        await store.deactivate(scope, weather.id);
      },
      async mutate(store, scope) {
        const [newest] = await store.list(scope);
        await store.deactivate(scope, newest!.id);
        await store.create(scope, { description: 'added later', content: 'not in the snapshot' });
      },
      view: (store, scope) => store.list({ userId: scope.userId }, { includeInactive: true }),
      userIdOf: (detail) => detail.userId,
      withBadId: (detail) => ({ ...detail, id: 'a/b' }),
    });
  });
}
