import { randomUUID } from 'node:crypto';
import type { ChatMessage, Scope } from '@kioku/core';
import { SESSION_DEFAULTS } from '@kioku/core/adapter';
import { InMemorySessionStore, LIMITS, type SessionStore } from '@kioku/core/store';
import { describe, expect, it } from 'vitest';
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
import { transcriptOutboxTests } from './outbox.js';
import { snapshotTests } from './snapshot.js';
import { textDomainTests } from './text-domain.js';
import { sessionKvVersionTests } from './versions.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
const KV_CAP = SESSION_DEFAULTS.kvCap;
const TRANSCRIPT_CAP = SESSION_DEFAULTS.transcriptCap;

/** Keys that are not ids but opaque strings: a store must keep them verbatim, never interpret them. */
const OPAQUE_KV_KEYS = ['../../etc/passwd', '..', '*', 'a:b', 'a/b', '%', 'user:*', 'ключ', '🔑', ' spaced '];
/** Keys the contract refuses (empty, over 256 characters, control characters). */
const BAD_KV_KEYS = ['', 'k'.repeat(257), 'x'.repeat(1000), '\u0000', 'a\nb', 'tab\tkey'];

/** A key's value, or null when the session has no entry for it. */
const kvValue = async (s: SessionStore, scope: Scope, id: string, key: string) =>
  (await s.kvGet(scope, id, key))?.value ?? null;

const msg = (i: number): ChatMessage => ({ role: i % 2 ? 'assistant' : 'user', content: `message ${i}` });

/** Conformance tests for a SessionStore. */
export function sessionStoreSuite(h: StoreHarness<SessionStore>): void {
  describe(`SessionStore conformance: ${h.name}`, () => {
    const fx = useHarness(h);
    sessionKvVersionTests(fx, h);
    transcriptOutboxTests(fx, h);

    describe('one text domain on every backend', () => {
      // The session each test user wrote into (created by `write`, read back by `read`).
      const sessionOf = new Map<string, string>();
      const session = async (s: SessionStore, scope: Scope) => {
        const id = sessionOf.get(scope.userId) ?? (await s.create(scope)).id;
        sessionOf.set(scope.userId, id);
        return id;
      };
      textDomainTests(fx, [
        {
          field: 'session k-v value',
          write: async (s, scope, text) => s.kvSet(scope, await session(s, scope), 'k', text),
          read: async (s, scope) =>
            sessionOf.has(scope.userId)
              ? (await s.kvGet(scope, sessionOf.get(scope.userId)!, 'k'))?.value
              : undefined,
        },
        {
          field: 'transcript content',
          write: async (s, scope, text) =>
            s.transcriptAppend(scope, await session(s, scope), { role: 'user', content: text }),
          read: async (s, scope) =>
            sessionOf.has(scope.userId)
              ? (await s.transcriptReadLast(scope, sessionOf.get(scope.userId)!, 1))[0]?.content
              : undefined,
        },
      ]);
    });
    const kvKeys = async (scope: Scope, id: string) => (await fx.store.kvList(scope, id)).map((e) => e.key);
    const transcript = async (scope: Scope, id: string) =>
      (await fx.store.transcriptReadLast(scope, id, 100_000)).map((e) => e.content);

    describe('sessions', () => {
      it('creates a UUIDv7 session with defaults and gets it', async () => {
        const scope = randomScope();
        const session = await fx.store.create(scope);
        expect(session.id).toMatch(UUID_V7);
        expect(session).toMatchObject({ userId: scope.userId, storeTypes: ['basic_session'], metadata: {} });
        expect(session.agentId).toBeUndefined();
        if (fx.caps.controllableClock) {
          expect(session.createdAt).toBe(isoNow(fx.ctx.clock));
          expect(Number.parseInt(session.id.replace(/-/g, '').slice(0, 12), 16)).toBe(fx.ctx.clock.now());
        }
        expect(await fx.store.get(scope, session.id)).toEqual(session);
        expect(await fx.store.list(scope)).toEqual([session]);
        expect((await fx.store.snapshot({ userId: scope.userId })).records).toEqual([
          { session, kv: [], transcript: [] },
        ]);
      });

      it('stores title, metadata and store types', async () => {
        const scope = randomScope({ agent: true });
        const options = {
          title: 'Trip planning',
          metadata: { channel: 'slack' },
          storeTypes: ['basic_session', 'kv'],
        };
        const session = await fx.store.create(scope, options);
        expect(session).toMatchObject({ ...options, agentId: scope.agentId });
        expect(await fx.store.get(scope, session.id)).toEqual(session);
      });

      it('lists sessions oldest first, with distinct ids', async () => {
        const scope = randomScope();
        const ids: string[] = [];
        for (let i = 0; i < 5; i++) {
          ids.push((await fx.store.create(scope, { title: `s${i}` })).id);
          await fx.tick(1000);
        }
        expect((await fx.store.list(scope)).map((s) => s.id)).toEqual(ids);
        expect(new Set(ids).size).toBe(5);
        expect([...ids].sort()).toEqual(ids);
      });

      it('an unknown session is null for get and NOT_FOUND for every other operation', async () => {
        const scope = randomScope();
        await fx.store.create(scope);
        const unknown = randomUUID();
        expect(await fx.store.get(scope, unknown)).toBeNull();
        await expectKiokuError(fx.store.kvGet(scope, unknown, 'k'), 'NOT_FOUND');
        await expectKiokuError(fx.store.kvSet(scope, unknown, 'k', 'v'), 'NOT_FOUND');
        await expectKiokuError(fx.store.kvDelete(scope, unknown, 'k'), 'NOT_FOUND');
        await expectKiokuError(fx.store.kvList(scope, unknown), 'NOT_FOUND');
        await expectKiokuError(fx.store.transcriptAppend(scope, unknown, msg(0)), 'NOT_FOUND');
        await expectKiokuError(fx.store.transcriptReadLast(scope, unknown, 5), 'NOT_FOUND');
        expect(await fx.store.delete(scope, unknown)).toBe(false);
        expect(await fx.store.list(scope)).toHaveLength(1);
      });

      it('delete removes the session and its data: true once, then false', async () => {
        const scope = randomScope();
        const keep = await fx.store.create(scope);
        const gone = await fx.store.create(scope);
        await fx.store.kvSet(scope, gone.id, 'k', 'v');
        await fx.store.transcriptAppend(scope, gone.id, msg(0));
        await fx.store.kvSet(scope, keep.id, 'k', 'kept');
        expect(await fx.store.delete(scope, gone.id)).toBe(true);
        expect(await fx.store.delete(scope, gone.id)).toBe(false);
        expect(await fx.store.get(scope, gone.id)).toBeNull();
        await expectKiokuError(fx.store.kvGet(scope, gone.id, 'k'), 'NOT_FOUND');
        expect(await fx.store.list(scope)).toEqual([keep]);
        expect(await kvValue(fx.store, scope, keep.id, 'k')).toBe('kept');
        const records = (await fx.store.snapshot({ userId: scope.userId })).records;
        expect(records.map((r) => r.session.id)).toEqual([keep.id]);
      });
    });

    describe('key-value', () => {
      it('sets, gets, updates, lists oldest first and deletes', async () => {
        const scope = randomScope();
        const { id } = await fx.store.create(scope);
        expect(await kvValue(fx.store, scope, id, 'missing')).toBeNull();
        await fx.store.kvSet(scope, id, 'city', 'Chicago');
        await fx.tick(1000);
        await fx.store.kvSet(scope, id, 'lang', 'en');
        expect(await kvValue(fx.store, scope, id, 'city')).toBe('Chicago');
        const list = await fx.store.kvList(scope, id);
        expect(list.map((e) => [e.key, e.value])).toEqual([
          ['city', 'Chicago'],
          ['lang', 'en'],
        ]);
        if (fx.caps.controllableClock) expect(list[1]?.ts).toBe(isoNow(fx.ctx.clock));
        await fx.tick(1000);
        await fx.store.kvSet(scope, id, 'city', 'Lisbon');
        expect(await kvValue(fx.store, scope, id, 'city')).toBe('Lisbon');
        expect(await kvKeys(scope, id)).toEqual(['lang', 'city']);
        expect(await fx.store.kvDelete(scope, id, 'lang')).toBe(true);
        expect(await fx.store.kvDelete(scope, id, 'lang')).toBe(false);
        expect(await kvValue(fx.store, scope, id, 'lang')).toBeNull();
        expect(await kvKeys(scope, id)).toEqual(['city']);
        await fx.store.kvSet(scope, id, 'empty', '');
        expect(await kvValue(fx.store, scope, id, 'empty')).toBe('');
      });

      it('keeps keys verbatim: path-like and glob-like keys are plain strings', async () => {
        const scope = randomScope();
        const { id } = await fx.store.create(scope);
        await fx.store.kvSet(scope, id, 'a', 'plain');
        expect(await kvValue(fx.store, scope, id, '*')).toBeNull();
        expect(await kvValue(fx.store, scope, id, 'user:*')).toBeNull();
        for (const key of OPAQUE_KV_KEYS) await fx.store.kvSet(scope, id, key, `value of ${key}`);
        for (const key of OPAQUE_KV_KEYS)
          expect(await kvValue(fx.store, scope, id, key)).toBe(`value of ${key}`);
        expect(await kvKeys(scope, id)).toEqual(['a', ...OPAQUE_KV_KEYS]);
        expect(await fx.store.kvDelete(scope, id, '*')).toBe(true);
        expect(await kvValue(fx.store, scope, id, 'a')).toBe('plain');
        expect(await kvKeys(scope, id)).toHaveLength(OPAQUE_KV_KEYS.length);
      });

      it(`keeps at most ${KV_CAP} keys: the ${KV_CAP + 1}st set evicts the first key`, async () => {
        const scope = randomScope();
        const { id } = await fx.store.create(scope);
        for (let i = 0; i <= KV_CAP; i++) await fx.store.kvSet(scope, id, `k${i}`, `v${i}`);
        const keys = await kvKeys(scope, id);
        expect(keys).toHaveLength(KV_CAP);
        expect(keys[0]).toBe('k1');
        expect(keys.at(-1)).toBe(`k${KV_CAP}`);
        expect(await kvValue(fx.store, scope, id, 'k0')).toBeNull();
        expect(await kvValue(fx.store, scope, id, 'k1')).toBe('v1');
      });

      it('an updated key moves to the end and is evicted last', async () => {
        const scope = randomScope();
        const { id } = await fx.store.create(scope);
        for (let i = 0; i < KV_CAP; i++) await fx.store.kvSet(scope, id, `k${i}`, `v${i}`);
        await fx.store.kvSet(scope, id, 'k0', 'updated');
        expect((await kvKeys(scope, id)).at(-1)).toBe('k0');
        await fx.store.kvSet(scope, id, 'new', 'x');
        const keys = await kvKeys(scope, id);
        expect(keys).toHaveLength(KV_CAP);
        expect(keys).not.toContain('k1');
        expect(keys.slice(-2)).toEqual(['k0', 'new']);
        expect(await kvValue(fx.store, scope, id, 'k0')).toBe('updated');
      });
    });

    describe('transcript', () => {
      it('appends single entries and batches in order and reads the last n', async () => {
        const scope = randomScope();
        const { id } = await fx.store.create(scope);
        const [first] = await fx.store.transcriptAppend(scope, id, { role: 'user', content: 'hello' });
        expect(first).toMatchObject({ role: 'user', content: 'hello' });
        if (fx.caps.controllableClock) expect(first?.ts).toBe(isoNow(fx.ctx.clock));
        const toolTurn: ChatMessage[] = [
          {
            role: 'assistant',
            content: '',
            toolCalls: [{ id: 'call_1', name: 'weather', arguments: '{"city":"Chicago"}' }],
          },
          { role: 'tool', content: '{"temp":21}', toolCallId: 'call_1', name: 'weather' },
          { role: 'assistant', content: 'It is 21 degrees.' },
        ];
        const appended = await fx.store.transcriptAppend(scope, id, toolTurn);
        expect(appended).toHaveLength(3);
        const all = await fx.store.transcriptReadLast(scope, id, 100);
        expect(all).toHaveLength(4);
        expect(all.slice(1)).toMatchObject(toolTurn);
        expect(await fx.store.transcriptReadLast(scope, id, 2)).toEqual(all.slice(2));
        expect(await fx.store.transcriptReadLast(scope, id, 0)).toEqual([]);
      });

      it(`keeps the last ${TRANSCRIPT_CAP} entries in order`, async () => {
        const scope = randomScope();
        const { id } = await fx.store.create(scope);
        await fx.store.transcriptAppend(
          scope,
          id,
          Array.from({ length: TRANSCRIPT_CAP }, (_, i) => msg(i)),
        );
        for (let i = TRANSCRIPT_CAP; i < TRANSCRIPT_CAP + 5; i++)
          await fx.store.transcriptAppend(scope, id, msg(i));
        const contents = await transcript(scope, id);
        expect(contents).toHaveLength(TRANSCRIPT_CAP);
        expect(contents).toEqual(Array.from({ length: TRANSCRIPT_CAP }, (_, i) => `message ${i + 5}`));
      });

      it('a batch larger than the cap keeps its last entries', async () => {
        const scope = randomScope();
        const { id } = await fx.store.create(scope);
        await fx.store.transcriptAppend(scope, id, msg(0));
        await fx.store.transcriptAppend(
          scope,
          id,
          Array.from({ length: TRANSCRIPT_CAP + 10 }, (_, i) => msg(i + 1)),
        );
        const contents = await transcript(scope, id);
        expect(contents).toHaveLength(TRANSCRIPT_CAP);
        expect(contents[0]).toBe('message 11');
        expect(contents.at(-1)).toBe(`message ${TRANSCRIPT_CAP + 10}`);
      });
    });

    describe('scope isolation', () => {
      it('user B can neither list nor get nor touch user A’s session', async () => {
        const a = randomScope();
        const b = randomScope();
        const session = await fx.store.create(a);
        await fx.store.kvSet(a, session.id, 'secret', 'A only');
        await fx.store.transcriptAppend(a, session.id, msg(0));
        await fx.store.create(b);
        expect((await fx.store.list(b)).map((s) => s.id)).not.toContain(session.id);
        expect(await fx.store.get(b, session.id)).toBeNull();
        await expectKiokuError(fx.store.kvGet(b, session.id, 'secret'), 'NOT_FOUND');
        await expectKiokuError(fx.store.kvSet(b, session.id, 'secret', 'overwritten'), 'NOT_FOUND');
        await expectKiokuError(fx.store.kvDelete(b, session.id, 'secret'), 'NOT_FOUND');
        await expectKiokuError(fx.store.kvList(b, session.id), 'NOT_FOUND');
        await expectKiokuError(fx.store.transcriptAppend(b, session.id, msg(1)), 'NOT_FOUND');
        await expectKiokuError(fx.store.transcriptReadLast(b, session.id, 10), 'NOT_FOUND');
        expect(await fx.store.delete(b, session.id)).toBe(false);
        expect(await fx.store.get(a, session.id)).toEqual(session);
        expect(await kvValue(fx.store, a, session.id, 'secret')).toBe('A only');
        expect(await transcript(a, session.id)).toEqual(['message 0']);
      });

      it('the same user with another agent (or none) has its own sessions', async () => {
        const user = randomScope();
        const agent = { ...user, agentId: randomId('agent') };
        const s0 = await fx.store.create(user);
        const s1 = await fx.store.create(agent);
        expect(await fx.store.list(user)).toEqual([s0]);
        expect(await fx.store.list(agent)).toEqual([s1]);
        expect(await fx.store.get(agent, s0.id)).toBeNull();
        await expectKiokuError(fx.store.kvGet(user, s1.id, 'k'), 'NOT_FOUND');
      });
    });

    describe('hostile ids and keys are refused with VALIDATION and change nothing', () => {
      for (const bad of [...HOSTILE_IDS, 'not-a-uuid', `${randomUUID()}x`]) {
        it(`session id / scope ${label(bad)}`, async () => {
          const scope = randomScope({ agent: true });
          const session = await fx.store.create(scope);
          await fx.store.kvSet(scope, session.id, 'k', 'v');
          const s = fx.store;
          await expectKiokuError(s.get(scope, bad), 'VALIDATION');
          await expectKiokuError(s.delete(scope, bad), 'VALIDATION');
          await expectKiokuError(s.kvGet(scope, bad, 'k'), 'VALIDATION');
          await expectKiokuError(s.kvSet(scope, bad, 'k', 'x'), 'VALIDATION');
          await expectKiokuError(s.kvList(scope, bad), 'VALIDATION');
          await expectKiokuError(s.transcriptAppend(scope, bad, msg(0)), 'VALIDATION');
          await expectKiokuError(s.transcriptReadLast(scope, bad, 1), 'VALIDATION');
          if (HOSTILE_IDS.includes(bad)) {
            for (const hostile of [{ userId: bad }, { userId: scope.userId, agentId: bad }]) {
              await expectKiokuError(s.create(hostile), 'VALIDATION');
              await expectKiokuError(s.list(hostile), 'VALIDATION');
              await expectKiokuError(s.get(hostile, session.id), 'VALIDATION');
              await expectKiokuError(s.kvSet(hostile, session.id, 'k', 'x'), 'VALIDATION');
              await expectKiokuError(s.delete(hostile, session.id), 'VALIDATION');
            }
          }
          expect(await s.list(scope)).toEqual([session]);
          expect(await kvValue(s, scope, session.id, 'k')).toBe('v');
        });
      }

      for (const bad of BAD_KV_KEYS) {
        it(`kv key ${label(bad)}`, async () => {
          const scope = randomScope();
          const { id } = await fx.store.create(scope);
          await fx.store.kvSet(scope, id, 'k', 'v');
          await expectKiokuError(fx.store.kvSet(scope, id, bad, 'x'), 'VALIDATION');
          await expectKiokuError(fx.store.kvGet(scope, id, bad), 'VALIDATION');
          await expectKiokuError(fx.store.kvDelete(scope, id, bad), 'VALIDATION');
          expect((await fx.store.kvList(scope, id)).map((e) => [e.key, e.value])).toEqual([['k', 'v']]);
        });
      }
    });

    describe('bad input is refused with VALIDATION and changes nothing', () => {
      const cases: Array<[string, (s: SessionStore, scope: Scope, id: string) => Promise<unknown>]> = [
        ['non-string kv value', (s, scope, id) => s.kvSet(scope, id, 'k', 42 as never)],
        [
          'kv value over the limit',
          (s, scope, id) => s.kvSet(scope, id, 'k', sized(LIMITS.sessionValueChars + 1)),
        ],
        [
          'unknown transcript role',
          (s, scope, id) => s.transcriptAppend(scope, id, { role: 'robot' as never, content: 'x' }),
        ],
        [
          'non-string transcript content',
          (s, scope, id) => s.transcriptAppend(scope, id, { role: 'user', content: 5 as never }),
        ],
        [
          'transcript content over the limit',
          (s, scope, id) =>
            s.transcriptAppend(scope, id, { role: 'user', content: sized(LIMITS.sessionValueChars + 1) }),
        ],
        [
          'a batch with one bad entry (nothing of it is appended)',
          (s, scope, id) => s.transcriptAppend(scope, id, [msg(1), msg(2), { role: 'user' } as never]),
        ],
        ['negative read count', (s, scope, id) => s.transcriptReadLast(scope, id, -1)],
        ['fractional read count', (s, scope, id) => s.transcriptReadLast(scope, id, 1.5)],
      ];
      for (const [name, call] of cases) {
        it(name, async () => {
          const scope = randomScope();
          const { id } = await fx.store.create(scope);
          await fx.store.kvSet(scope, id, 'k', 'v');
          await fx.store.transcriptAppend(scope, id, msg(0));
          await expectKiokuError(call(fx.store, scope, id), 'VALIDATION');
          expect((await fx.store.kvList(scope, id)).map((e) => [e.key, e.value])).toEqual([['k', 'v']]);
          expect(await transcript(scope, id)).toEqual(['message 0']);
        });
      }

      it('bad session options', async () => {
        const scope = randomScope();
        await expectKiokuError(fx.store.create(scope, { title: sized(LIMITS.titleChars + 1) }), 'VALIDATION');
        await expectKiokuError(fx.store.create(scope, { storeTypes: [''] }), 'VALIDATION');
        await expectKiokuError(fx.store.create(scope, { metadata: 'x' as never }), 'VALIDATION');
        expect(await fx.store.list(scope)).toEqual([]);
      });
    });

    describe('concurrent writes lose nothing', () => {
      it('50 concurrent kvSet calls on distinct keys are all kept', async () => {
        const scope = randomScope();
        const { id } = await fx.store.create(scope);
        await times(50, (i) => fx.store.kvSet(scope, id, `k${i}`, `v${i}`));
        const entries = await fx.store.kvList(scope, id);
        expect(entries).toHaveLength(50);
        for (let i = 0; i < 50; i++) expect(await kvValue(fx.store, scope, id, `k${i}`)).toBe(`v${i}`);
      });

      it('50 concurrent transcript appends are all kept, batches unsplit', async () => {
        const scope = randomScope();
        const { id } = await fx.store.create(scope);
        await times(50, (i) =>
          fx.store.transcriptAppend(scope, id, [
            { role: 'user', content: `q${i}` },
            { role: 'assistant', content: `a${i}` },
          ]),
        );
        const contents = await transcript(scope, id);
        expect(contents).toHaveLength(100);
        for (let i = 0; i < 100; i += 2) expect(contents[i + 1]).toBe(contents[i]!.replace('q', 'a'));
      });

      it('concurrent creates are all listed', async () => {
        const scope = randomScope();
        const created = await times(20, () => fx.store.create(scope));
        const listed = await fx.store.list(scope);
        expect(new Set(listed.map((s) => s.id))).toEqual(new Set(created.map((s) => s.id)));
      });

      it.skipIf(!h.createTwin)('two instances over the same storage, interleaved', async () => {
        const scope = randomScope();
        const twin = await fx.twin();
        const stores = [fx.store, twin];
        const { id } = await fx.store.create(scope);
        expect(await twin.get(scope, id)).not.toBeNull();
        await Promise.all([
          ...Array.from({ length: 50 }, (_, i) => stores[i % 2]!.kvSet(scope, id, `k${i}`, `v${i}`)),
          ...Array.from({ length: 50 }, (_, i) => stores[i % 2]!.transcriptAppend(scope, id, msg(i))),
        ]);
        expect(await twin.kvList(scope, id)).toHaveLength(50);
        expect(await fx.store.kvList(scope, id)).toHaveLength(50);
        expect(await twin.transcriptReadLast(scope, id, 1000)).toHaveLength(50);
        await times(10, (i) => stores[i % 2]!.create(scope));
        expect(await twin.list(scope)).toHaveLength(11);
      });
    });

    snapshotTests(fx, {
      kind: 'sessions',
      scope: () => randomScope({ agent: true }),
      reference: (ctx) => new InMemorySessionStore({ clock: ctx.clock }),
      async seed(store, scope, f) {
        const user = { userId: scope.userId };
        const first = await store.create(user, { title: 'First', metadata: { channel: 'cli' } });
        await store.kvSet(user, first.id, 'city', 'Chicago');
        await store.kvSet(user, first.id, '../odd key', 'kept verbatim');
        await store.transcriptAppend(user, first.id, [msg(0), msg(1)]);
        await f.tick();
        const second = await store.create(user);
        await store.transcriptAppend(user, second.id, {
          role: 'assistant',
          content: '',
          toolCalls: [{ id: 'c1', name: 'search', arguments: '{}' }],
        });
        await f.tick();
        const third = await store.create(scope, { title: 'Agent session' });
        await store.kvSet(scope, third.id, 'k', 'v');
      },
      async mutate(store, scope) {
        const user = { userId: scope.userId };
        const [first, second] = await store.list(user);
        await store.kvSet(user, first!.id, 'city', 'Lisbon');
        await store.transcriptAppend(user, first!.id, msg(2));
        await store.delete(user, second!.id);
        await store.create(user, { title: 'Added later' });
      },
      async view(store, scope) {
        const read = async (s: Scope) =>
          Promise.all(
            (await store.list(s)).map(async (session) => ({
              session,
              kv: await store.kvList(s, session.id),
              transcript: await store.transcriptReadLast(s, session.id, 100_000),
            })),
          );
        return { user: await read({ userId: scope.userId }), agent: await read(scope) };
      },
      userIdOf: (record) => record.session.userId,
      withBadId: (record) => ({ ...record, session: { ...record.session, id: '../not-a-uuid' } }),
    });
  });
}
