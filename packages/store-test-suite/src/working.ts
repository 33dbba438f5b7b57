import type { Scope } from '@kioku/core';
import { WORKING_DEFAULTS } from '@kioku/core/adapter';
import { InMemoryWorkingMemoryStore, LIMITS, MAX_TTL_MS, type WorkingMemoryStore } from '@kioku/core/store';
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
import { leaseTests } from './lease.js';
import { snapshotTests } from './snapshot.js';
import { textDomainTests } from './text-domain.js';
import { workingVersionTests } from './versions.js';

const CAP = WORKING_DEFAULTS.maxEntriesPerNamespace;
const TTL = WORKING_DEFAULTS.defaultTtlMs;

/** Keys that are invalid as working-memory paths, beyond the hostile ids. */
const HOSTILE_KEYS: readonly string[] = [
  ...HOSTILE_IDS,
  'session/../x',
  'session/abc/../../etc/passwd',
  'session/abc',
  '/session/abc/x',
  'session//abc/x',
  'session/abc/x/',
  'session/abc/*',
  'session/abc/a:b',
  `session/abc/${'x'.repeat(200)}`,
  'session/abc/\u0000',
];

/** Hostile as ids, but well-formed key prefixes (two whole segments). */
const VALID_PREFIXES = new Set(['a/b']);

/** Conformance tests for a WorkingMemoryStore. */
export function workingMemoryStoreSuite(h: StoreHarness<WorkingMemoryStore>): void {
  describe(`WorkingMemoryStore conformance: ${h.name}`, () => {
    const fx = useHarness(h);
    workingVersionTests(fx, h);
    leaseTests(fx, h);

    describe('one text domain on every backend', () => {
      textDomainTests(fx, [
        {
          field: 'working value',
          write: (s, scope, text) => s.set(scope, 'session/s1/note', text),
          read: async (s, scope) => (await s.get(scope, 'session/s1/note'))?.value,
        },
      ]);
    });
    const clockSkip = !(h.capabilities?.controllableClock ?? true);
    const keysOf = async (scope: Scope, prefix?: string) =>
      (await fx.store.list(scope, prefix)).map((e) => e.key);

    describe('set, get, delete', () => {
      it('stores a value with the default TTL and reads it back', async () => {
        const scope = randomScope();
        const entry = await fx.store.set(scope, 'session/s1/inbox', 'three unread emails');
        expect(entry).toMatchObject({
          key: 'session/s1/inbox',
          userId: scope.userId,
          value: 'three unread emails',
          tags: [],
        });
        expect(entry.agentId).toBeUndefined();
        expect(entry.category).toBeUndefined();
        expect(Date.parse(entry.expiresAt) - Date.parse(entry.storedAt)).toBe(TTL);
        if (fx.caps.controllableClock) expect(entry.storedAt).toBe(isoNow(fx.ctx.clock));
        expect(await fx.store.get(scope, 'session/s1/inbox')).toEqual(entry);
        expect((await fx.store.snapshot({ userId: scope.userId })).records).toEqual([entry]);
      });

      it('stores ttlMs, category and tags; an empty value is allowed', async () => {
        const scope = randomScope({ agent: true });
        const entry = await fx.store.set(scope, 'patrol/heartbeat/findings', '', {
          ttlMs: 60_000,
          category: 'ops/alerts',
          tags: ['disk', 'urgent'],
        });
        expect(entry).toMatchObject({ value: '', category: 'ops/alerts', tags: ['disk', 'urgent'] });
        expect(entry.agentId).toBe(scope.agentId);
        expect(Date.parse(entry.expiresAt) - Date.parse(entry.storedAt)).toBe(60_000);
        expect(await fx.store.get(scope, entry.key)).toEqual(entry);
      });

      it('overwriting replaces the value and refreshes the timestamps', async () => {
        const scope = randomScope();
        const first = await fx.store.set(scope, 'session/s1/draft', 'v1', { tags: ['a'] });
        await fx.tick(1000);
        const second = await fx.store.set(scope, 'session/s1/draft', 'v2');
        expect(second.value).toBe('v2');
        expect(second.tags).toEqual([]);
        expect(Date.parse(second.storedAt)).toBeGreaterThan(Date.parse(first.storedAt));
        expect(Date.parse(second.expiresAt)).toBeGreaterThan(Date.parse(first.expiresAt));
        expect(await fx.store.get(scope, 'session/s1/draft')).toEqual(second);
        expect(await keysOf(scope)).toEqual(['session/s1/draft']);
      });

      it('get of a missing key is null; delete is true once, then false', async () => {
        const scope = randomScope();
        await fx.store.set(scope, 'session/s1/a', 'A');
        await fx.store.set(scope, 'session/s1/b', 'B');
        expect(await fx.store.get(scope, 'session/s1/missing')).toBeNull();
        expect(await fx.store.delete(scope, 'session/s1/a')).toBe(true);
        expect(await fx.store.delete(scope, 'session/s1/a')).toBe(false);
        expect(await fx.store.get(scope, 'session/s1/a')).toBeNull();
        expect(await keysOf(scope)).toEqual(['session/s1/b']);
        expect(await fx.store.delete(scope, 'session/s9/never')).toBe(false);
      });
    });

    describe('list', () => {
      it('lists live entries without values, oldest first, under a prefix on segment boundaries', async () => {
        const scope = randomScope();
        for (const key of [
          'session/abc/one',
          'patrol/heartbeat/x',
          'session/abcd/two',
          'session/abc/deep/three',
        ]) {
          await fx.store.set(scope, key, `value of ${key}`);
          await fx.tick();
        }
        const all = await fx.store.list(scope);
        expect(all.map((e) => e.key)).toEqual([
          'session/abc/one',
          'patrol/heartbeat/x',
          'session/abcd/two',
          'session/abc/deep/three',
        ]);
        expect(all.every((e) => !('value' in e))).toBe(true);
        expect(await keysOf(scope, 'session/abc')).toEqual(['session/abc/one', 'session/abc/deep/three']);
        expect(await keysOf(scope, 'session')).toEqual([
          'session/abc/one',
          'session/abcd/two',
          'session/abc/deep/three',
        ]);
        expect(await keysOf(scope, 'patrol')).toEqual(['patrol/heartbeat/x']);
        expect(await keysOf(scope, 'session/abc/one')).toEqual(['session/abc/one']);
        expect(await keysOf(scope, 'subagent')).toEqual([]);
      });
    });

    describe('search', () => {
      const seed = async (scope: Scope) => {
        await fx.store.set(
          scope,
          'session/s1/emails_inbox',
          'Three unread emails from the landlord about rent',
          {
            category: 'email',
            tags: ['inbox'],
          },
        );
        await fx.tick();
        await fx.store.set(scope, 'session/s1/weather', 'Rain expected in Chicago tomorrow afternoon', {
          category: 'weather/forecast',
        });
        await fx.tick();
        await fx.store.set(
          scope,
          'patrol/heartbeat/disk',
          'Disk usage on the build server is at 91 percent',
          {
            category: 'ops/alerts',
            tags: ['urgent'],
          },
        );
        await fx.tick();
        await fx.store.set(scope, 'session/s2/weather', 'Sunny weather in Lisbon all week');
      };

      it('ranks the relevant entry first', async () => {
        const scope = randomScope();
        await seed(scope);
        expect((await fx.store.search(scope, { query: 'disk usage alert' }))[0]?.entry.key).toBe(
          'patrol/heartbeat/disk',
        );
        expect((await fx.store.search(scope, { query: 'unread emails' }))[0]?.entry.key).toBe(
          'session/s1/emails_inbox',
        );
        const hit = (await fx.store.search(scope, { query: 'rain Chicago' }))[0];
        expect(hit?.entry).toEqual(await fx.store.get(scope, 'session/s1/weather'));
      });

      it('restricts to a prefix', async () => {
        const scope = randomScope();
        await seed(scope);
        const hits = await fx.store.search(scope, { query: 'weather', prefix: 'session/s2' });
        expect(hits.map((hit) => hit.entry.key)).toEqual(['session/s2/weather']);
        const patrol = await fx.store.search(scope, { query: 'weather', prefix: 'patrol', limit: 100 });
        expect(patrol.every((hit) => hit.entry.key.startsWith('patrol/'))).toBe(true);
      });

      it('applies category and tags filters', async () => {
        const scope = randomScope();
        await seed(scope);
        const weather = await fx.store.search(scope, { query: 'weather rain sunny', category: 'weather' });
        expect(weather.map((hit) => hit.entry.key)).toEqual(['session/s1/weather']);
        const urgent = await fx.store.search(scope, { tags: ['urgent'] });
        expect(urgent.map((hit) => hit.entry.key)).toEqual(['patrol/heartbeat/disk']);
      });

      it('an empty query returns the newest entries first, within the limit', async () => {
        const scope = randomScope();
        await seed(scope);
        const hits = await fx.store.search(scope, { limit: 2 });
        expect(hits.map((hit) => hit.entry.key)).toEqual(['session/s2/weather', 'patrol/heartbeat/disk']);
        const s1 = await fx.store.search(scope, { query: '', prefix: 'session/s1' });
        expect(s1.map((hit) => hit.entry.key)).toEqual(['session/s1/weather', 'session/s1/emails_inbox']);
      });
    });

    describe('expiry (controllable clock)', () => {
      it.skipIf(clockSkip)(`entries live ${TTL / 60_000} minutes by default`, async () => {
        const scope = randomScope();
        await fx.store.set(scope, 'session/s1/ephemeral', 'soon gone: zebra');
        fx.ctx.clock.advance(TTL - 1000);
        expect(await fx.store.get(scope, 'session/s1/ephemeral')).not.toBeNull();
        expect(await keysOf(scope)).toEqual(['session/s1/ephemeral']);
        expect(await fx.store.search(scope, { query: 'zebra' })).toHaveLength(1);
        expect(await fx.store.search(scope, {})).toHaveLength(1);
        fx.ctx.clock.advance(2000);
        expect(await fx.store.get(scope, 'session/s1/ephemeral')).toBeNull();
        expect(await fx.store.list(scope)).toEqual([]);
        expect(await fx.store.list(scope, 'session/s1')).toEqual([]);
        expect(await fx.store.search(scope, { query: 'zebra' })).toEqual([]);
        expect(await fx.store.search(scope, {})).toEqual([]);
        expect((await fx.store.snapshot({ userId: scope.userId })).records).toEqual([]);
      });

      it.skipIf(clockSkip)('honours a per-entry ttlMs', async () => {
        const scope = randomScope();
        await fx.store.set(scope, 'session/s1/short', 'short', { ttlMs: 1000 });
        await fx.store.set(scope, 'session/s1/long', 'long', { ttlMs: 60 * 60_000 });
        fx.ctx.clock.advance(999);
        expect(await fx.store.get(scope, 'session/s1/short')).not.toBeNull();
        fx.ctx.clock.advance(2);
        expect(await fx.store.get(scope, 'session/s1/short')).toBeNull();
        fx.ctx.clock.advance(TTL * 2);
        expect((await fx.store.get(scope, 'session/s1/long'))?.value).toBe('long');
        expect(await keysOf(scope)).toEqual(['session/s1/long']);
      });

      it.skipIf(clockSkip)('overwriting restarts the TTL', async () => {
        const scope = randomScope();
        await fx.store.set(scope, 'session/s1/k', 'v1');
        fx.ctx.clock.advance(TTL - 60_000);
        await fx.store.set(scope, 'session/s1/k', 'v2');
        fx.ctx.clock.advance(TTL - 60_000);
        expect((await fx.store.get(scope, 'session/s1/k'))?.value).toBe('v2');
      });

      it.skipIf(clockSkip)('sweep() removes expired entries of every user and returns how many', async () => {
        const a = randomScope();
        const b = randomScope({ agent: true });
        await fx.store.set(a, 'session/s1/x', 'x', { ttlMs: 1000 });
        await fx.store.set(a, 'patrol/p/y', 'y', { ttlMs: 1000 });
        await fx.store.set(b, 'session/s2/z', 'z', { ttlMs: 1000 });
        await fx.store.set(a, 'session/s1/keep', 'keep', { ttlMs: 60_000 });
        await fx.store.set(b, 'subagent/t1/keep', 'keep', { ttlMs: 60_000 });
        expect(await fx.store.sweep()).toBe(0);
        fx.ctx.clock.advance(5000);
        expect(await fx.store.sweep()).toBe(3);
        expect(await fx.store.sweep()).toBe(0);
        expect(await keysOf(a)).toEqual(['session/s1/keep']);
        expect(await keysOf(b)).toEqual(['subagent/t1/keep']);
        expect(await fx.store.get(a, 'session/s1/x')).toBeNull();
        const all = await fx.store.snapshot({ allUsers: true });
        expect(all.records.map((e) => e.key).sort()).toEqual(['session/s1/keep', 'subagent/t1/keep']);
      });

      it.skipIf(clockSkip)('expired entries do not count towards the cap', async () => {
        const scope = randomScope();
        for (let i = 0; i < CAP; i++) await fx.store.set(scope, `session/s1/old${i}`, 'old', { ttlMs: 1000 });
        fx.ctx.clock.advance(2000);
        for (let i = 0; i < CAP; i++) await fx.store.set(scope, `session/s1/new${i}`, 'new');
        const keys = await keysOf(scope, 'session/s1');
        expect(keys).toHaveLength(CAP);
        expect(keys.every((k) => k.startsWith('session/s1/new'))).toBe(true);
      });
    });

    describe(`per-namespace cap (${CAP})`, () => {
      it('the 51st entry evicts the oldest of that namespace only', async () => {
        const scope = randomScope();
        await fx.store.set(scope, 'session/other/keep', 'other namespace');
        await fx.store.set(scope, 'patrol/heartbeat/keep', 'other root');
        for (let i = 0; i < CAP; i++) {
          await fx.store.set(scope, `session/full/k${i}`, `v${i}`);
          await fx.tick();
        }
        expect(await keysOf(scope, 'session/full')).toHaveLength(CAP);
        await fx.store.set(scope, `session/full/k${CAP}`, 'newest');
        const keys = await keysOf(scope, 'session/full');
        expect(keys).toHaveLength(CAP);
        expect(keys).not.toContain('session/full/k0');
        expect(keys).toContain('session/full/k1');
        expect(keys.at(-1)).toBe(`session/full/k${CAP}`);
        expect(await fx.store.get(scope, 'session/full/k0')).toBeNull();
        expect((await fx.store.get(scope, 'session/other/keep'))?.value).toBe('other namespace');
        expect((await fx.store.get(scope, 'patrol/heartbeat/keep'))?.value).toBe('other root');
      });

      it('overwriting a key does not count twice, and makes it the newest', async () => {
        const scope = randomScope();
        for (let i = 0; i < CAP; i++) {
          await fx.store.set(scope, `session/s1/k${i}`, `v${i}`);
          await fx.tick();
        }
        for (let round = 0; round < 5; round++) {
          await fx.store.set(scope, 'session/s1/k0', `rewrite ${round}`);
          await fx.tick();
        }
        const keys = await keysOf(scope, 'session/s1');
        expect(keys).toHaveLength(CAP);
        expect(keys.at(-1)).toBe('session/s1/k0');
        await fx.store.set(scope, `session/s1/k${CAP}`, 'new');
        const after = await keysOf(scope, 'session/s1');
        expect(after).toHaveLength(CAP);
        expect(after).toContain('session/s1/k0');
        expect(after).not.toContain('session/s1/k1');
      });

      it('another user’s or agent’s namespace of the same name is separate', async () => {
        const a = randomScope();
        const agent = { ...a, agentId: randomId('agent') };
        const b = randomScope();
        await fx.store.set(b, 'session/s1/b-key', 'B');
        await fx.store.set(agent, 'session/s1/agent-key', 'agent');
        for (let i = 0; i <= CAP; i++) await fx.store.set(a, `session/s1/k${i}`, 'A');
        expect(await keysOf(b)).toEqual(['session/s1/b-key']);
        expect(await keysOf(agent)).toEqual(['session/s1/agent-key']);
      });
    });

    describe('scope isolation', () => {
      it('user B never sees user A’s entries', async () => {
        const a = randomScope();
        const b = randomScope();
        const entry = await fx.store.set(a, 'session/shared/secret', 'A’s secret plan');
        await fx.store.set(b, 'session/shared/own', 'B’s note');
        expect(await fx.store.get(b, 'session/shared/secret')).toBeNull();
        expect(await keysOf(b)).toEqual(['session/shared/own']);
        expect(await keysOf(b, 'session/shared')).toEqual(['session/shared/own']);
        const found = await fx.store.search(b, { query: 'secret plan', limit: 100 });
        expect(found.map((hit) => hit.entry.key)).not.toContain('session/shared/secret');
        expect(found.every((hit) => hit.entry.userId === b.userId)).toBe(true);
        expect((await fx.store.search(b, {})).map((hit) => hit.entry.key)).toEqual(['session/shared/own']);
        expect(await fx.store.delete(b, 'session/shared/secret')).toBe(false);
        expect(await fx.store.get(a, 'session/shared/secret')).toEqual(entry);
      });

      it('the same user with another agent (or none) is another partition', async () => {
        const user = randomScope();
        const agent = { ...user, agentId: randomId('agent') };
        await fx.store.set(user, 'session/s/k', 'no agent');
        await fx.store.set(agent, 'session/s/k', 'agent');
        expect((await fx.store.get(user, 'session/s/k'))?.value).toBe('no agent');
        expect((await fx.store.get(agent, 'session/s/k'))?.value).toBe('agent');
        expect(await fx.store.list(agent)).toHaveLength(1);
        const hits = await fx.store.search(agent, { query: 'agent' });
        expect(hits.map((hit) => hit.entry.value)).toEqual(['agent']);
        await fx.store.delete(agent, 'session/s/k');
        expect((await fx.store.get(user, 'session/s/k'))?.value).toBe('no agent');
      });
    });

    describe('hostile ids and keys are refused with VALIDATION and change nothing', () => {
      for (const bad of HOSTILE_KEYS) {
        it(`key ${label(bad)}`, async () => {
          const scope = randomScope();
          const kept = await fx.store.set(scope, 'session/s1/keep', 'keep me');
          await expectKiokuError(fx.store.set(scope, bad, 'x'), 'VALIDATION');
          await expectKiokuError(fx.store.get(scope, bad), 'VALIDATION');
          await expectKiokuError(fx.store.delete(scope, bad), 'VALIDATION');
          const { value: _value, ...info } = kept;
          expect(await fx.store.list(scope)).toEqual([info]);
          expect(await fx.store.get(scope, 'session/s1/keep')).toEqual(kept);
        });
      }

      for (const bad of HOSTILE_IDS) {
        it(`scope ${label(bad)}`, async () => {
          const scope = randomScope({ agent: true });
          const kept = await fx.store.set(scope, 'session/s1/keep', 'keep me');
          for (const hostile of [{ userId: bad }, { userId: scope.userId, agentId: bad }]) {
            await expectKiokuError(fx.store.set(hostile, 'session/s1/keep', 'x'), 'VALIDATION');
            await expectKiokuError(fx.store.get(hostile, 'session/s1/keep'), 'VALIDATION');
            await expectKiokuError(fx.store.list(hostile), 'VALIDATION');
            await expectKiokuError(fx.store.search(hostile, { query: 'keep' }), 'VALIDATION');
            await expectKiokuError(fx.store.delete(hostile, 'session/s1/keep'), 'VALIDATION');
          }
          if (!VALID_PREFIXES.has(bad)) {
            await expectKiokuError(fx.store.list(scope, bad), 'VALIDATION');
            await expectKiokuError(fx.store.search(scope, { prefix: bad }), 'VALIDATION');
          }
          expect(await fx.store.get(scope, 'session/s1/keep')).toEqual(kept);
        });
      }
    });

    describe('bad input is refused with VALIDATION and changes nothing', () => {
      const cases: Array<[string, unknown, unknown]> = [
        ['non-string value', 42, undefined],
        ['value over the limit', sized(LIMITS.workingValueChars + 1), undefined],
        ['ttlMs 0', 'v', { ttlMs: 0 }],
        ['negative ttlMs', 'v', { ttlMs: -5 }],
        ['fractional ttlMs', 'v', { ttlMs: 1.5 }],
        ['ttlMs over 30 days', 'v', { ttlMs: MAX_TTL_MS + 1 }],
        ['bad category', 'v', { category: 'a//b' }],
        ['too many tags', 'v', { tags: Array.from({ length: LIMITS.tagCount + 1 }, (_, i) => `t${i}`) }],
      ];
      for (const [name, value, options] of cases) {
        it(`set: ${name}`, async () => {
          const scope = randomScope();
          const kept = await fx.store.set(scope, 'session/s1/k', 'keep me');
          await expectKiokuError(
            fx.store.set(scope, 'session/s1/k', value as string, options as never),
            'VALIDATION',
          );
          expect(await fx.store.get(scope, 'session/s1/k')).toEqual(kept);
          expect(await fx.store.list(scope)).toHaveLength(1);
        });
      }

      it('bad queries', async () => {
        const scope = randomScope();
        await fx.store.set(scope, 'session/s1/k', 'v');
        await expectKiokuError(fx.store.search(scope, { query: sized(LIMITS.queryChars + 1) }), 'VALIDATION');
        await expectKiokuError(fx.store.search(scope, { limit: 0 }), 'VALIDATION');
        await expectKiokuError(fx.store.search(scope, { category: '../x' }), 'VALIDATION');
      });
    });

    describe('concurrent writes lose nothing', () => {
      it(`${CAP} concurrent sets into one namespace are all kept`, async () => {
        const scope = randomScope();
        await times(CAP, (i) => fx.store.set(scope, `session/s1/k${i}`, `v${i}`));
        expect(await keysOf(scope, 'session/s1')).toHaveLength(CAP);
      });

      it('concurrent sets into several namespaces are all kept', async () => {
        const scope = randomScope();
        await times(50, (i) =>
          fx.store.set(scope, `${i % 2 ? 'session' : 'patrol'}/n${i % 5}/k${i}`, `v${i}`),
        );
        expect(await fx.store.list(scope)).toHaveLength(50);
      });

      it(`concurrent sets never push a namespace past the cap`, async () => {
        const scope = randomScope();
        await times(CAP + 25, (i) => fx.store.set(scope, `session/s1/k${i}`, `v${i}`));
        expect(await keysOf(scope, 'session/s1')).toHaveLength(CAP);
        expect(await fx.store.search(scope, { prefix: 'session/s1', limit: 1000 })).toHaveLength(CAP);
      });

      it.skipIf(!h.createTwin)('two instances over the same storage, interleaved', async () => {
        const scope = randomScope();
        const twin = await fx.twin();
        const stores = [fx.store, twin];
        await times(CAP + 10, (i) => stores[i % 2]!.set(scope, `session/s1/k${i}`, `v${i}`));
        expect(await keysOf(scope, 'session/s1')).toHaveLength(CAP);
        expect(await twin.list(scope, 'session/s1')).toHaveLength(CAP);
        await times(20, (i) => stores[i % 2]!.set(scope, `patrol/p${i}/k`, `v${i}`));
        expect(await twin.list(scope, 'patrol')).toHaveLength(20);
      });
    });

    snapshotTests(fx, {
      kind: 'working',
      scope: () => randomScope({ agent: true }),
      reference: (ctx) => new InMemoryWorkingMemoryStore({ clock: ctx.clock }),
      async seed(store, scope, f) {
        const user = { userId: scope.userId };
        await store.set(user, 'session/s1/notes', 'Meeting moved to 3pm', {
          category: 'calendar',
          tags: ['work'],
        });
        await f.tick();
        await store.set(user, 'session/s1/todo', 'Buy milk', { ttlMs: 60 * 60_000 });
        await f.tick();
        await store.set(user, 'patrol/heartbeat/disk', 'Disk at 91%');
        await f.tick();
        await store.set(scope, 'subagent/t1/result', 'Found three flights');
      },
      // Only keys the snapshot holds: how working memory is partitioned below a user + agent is the backend's.
      async mutate(store, scope) {
        const user = { userId: scope.userId };
        await store.set(user, 'session/s1/notes', 'changed');
        await store.delete(user, 'session/s1/todo');
        await store.delete(scope, 'subagent/t1/result');
      },
      async view(store, scope) {
        const read = async (s: Scope) =>
          Promise.all((await store.list(s)).map((info) => store.get(s, info.key)));
        return { user: await read({ userId: scope.userId }), agent: await read(scope) };
      },
      userIdOf: (entry) => entry.userId,
      withBadId: (entry) => ({ ...entry, key: 'session/../etc/passwd' }),
    });
  });
}
