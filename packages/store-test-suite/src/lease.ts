import type { Clock } from '@kioku/core';
import { systemClock } from '@kioku/core/adapter';
import { acquireLease, leaseKey, readLease, withLease } from '@kioku/core/passes';
import type { WorkingMemoryStore } from '@kioku/core/store';
import { describe, expect, it } from 'vitest';
import type { Fixture, StoreHarness } from './harness.js';
import { expectKiokuError, randomScope } from './helpers.js';
import { letTimePass } from './versions.js';

/**
 * Core's per-user lease over this store: two store instances (two app instances over one backend) race for
 * it. Where the store keeps its own time, TTLs are short and really waited for.
 */
export function leaseTests(fx: Fixture<WorkingMemoryStore>, h: StoreHarness<WorkingMemoryStore>): void {
  describe('leases over this store (core’s acquireLease / withLease)', () => {
    const clock = (): Clock => (fx.caps.controllableClock ? fx.ctx.clock : systemClock);
    // A TTL that expires within a test where time is real, with room for a loaded machine's round trips.
    const ttl = () => (fx.caps.controllableClock ? 60_000 : 1000);
    const other = async () => (h.createTwin ? fx.twin() : fx.store);

    it('of two instances acquiring at once, exactly one wins', async () => {
      const scope = randomScope({ agent: true });
      const twin = await other();
      for (const name of ['dream', 'extract', 'consolidate']) {
        const [a, b] = await Promise.all([
          acquireLease(fx.store, scope, name, { ttlMs: ttl(), holder: 'a', clock: clock() }),
          acquireLease(twin, scope, name, { ttlMs: ttl(), holder: 'b', clock: clock() }),
        ]);
        expect([a, b].filter((lease) => lease !== null)).toHaveLength(1);
        const winner = (a ?? b)!;
        expect(winner).toMatchObject({ name, held: true, version: 1 });
        expect(await readLease(twin, scope, name)).toMatchObject({ holder: winner.holder, version: 1 });
      }
    });

    it('a held lease is busy for every other holder until it is released', async () => {
      const scope = randomScope();
      const twin = await other();
      const a = (await acquireLease(fx.store, scope, 'dream', {
        ttlMs: ttl(),
        holder: 'a',
        clock: clock(),
      }))!;
      expect(a).not.toBeNull();
      expect(
        await acquireLease(twin, scope, 'dream', { ttlMs: ttl(), holder: 'b', clock: clock() }),
      ).toBeNull();
      // Another name, another user: other leases.
      expect(await acquireLease(twin, scope, 'extract', { ttlMs: ttl(), clock: clock() })).not.toBeNull();
      expect(
        await acquireLease(twin, randomScope(), 'dream', { ttlMs: ttl(), clock: clock() }),
      ).not.toBeNull();
      expect(await a.release()).toBe(true);
      expect(a.held).toBe(false);
      expect(await readLease(twin, scope, 'dream')).toBeNull();
      const b = await acquireLease(twin, scope, 'dream', { ttlMs: ttl(), holder: 'b', clock: clock() });
      expect(b).toMatchObject({ holder: 'b', held: true });
      expect(await a.release()).toBe(false);
      expect(await a.renew()).toBe(false);
      expect(await readLease(fx.store, scope, 'dream')).toMatchObject({ holder: 'b' });
    });

    it('after expiry another instance takes it; the stale holder neither renews nor releases it', async () => {
      const scope = randomScope();
      const twin = await other();
      const a = (await acquireLease(fx.store, scope, 'dream', {
        ttlMs: ttl(),
        holder: 'a',
        clock: clock(),
      }))!;
      await letTimePass(fx, ttl() + 100);
      const b = (await acquireLease(twin, scope, 'dream', { ttlMs: ttl(), holder: 'b', clock: clock() }))!;
      expect(b).toMatchObject({ holder: 'b', version: 1 });
      // Both wrote version 1: only the holder's own value tells them apart.
      expect(await a.renew()).toBe(false);
      expect(await a.release()).toBe(false);
      expect(await readLease(fx.store, scope, 'dream')).toMatchObject({ holder: 'b', version: 1 });
      expect(await b.renew()).toBe(true);
      expect(b.version).toBe(2);
      expect(await b.release()).toBe(true);
    });

    it('renewing keeps it held past its first expiry', async () => {
      const scope = randomScope();
      const twin = await other();
      const a = (await acquireLease(fx.store, scope, 'dream', {
        ttlMs: ttl(),
        holder: 'a',
        clock: clock(),
      }))!;
      const firstExpiry = a.expiresAt;
      await letTimePass(fx, Math.floor((ttl() * 2) / 3));
      expect(await a.renew()).toBe(true);
      expect(Date.parse(a.expiresAt)).toBeGreaterThan(Date.parse(firstExpiry));
      await letTimePass(fx, Math.floor((ttl() * 2) / 3));
      expect(await acquireLease(twin, scope, 'dream', { ttlMs: ttl(), clock: clock() })).toBeNull();
      expect(await readLease(twin, scope, 'dream')).toMatchObject({ holder: 'a', version: 2 });
      expect(await a.release()).toBe(true);
    });

    it('withLease runs the work on one instance and answers busy on the other', async () => {
      const scope = randomScope();
      const twin = await other();
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const options = { ttlMs: ttl(), clock: clock() };
      const first = withLease(
        fx.store,
        scope,
        'dream',
        async () => {
          await gate;
          return 'dreamt';
        },
        { ...options, holder: 'a' },
      );
      // Wait until the first has the lease, then race it.
      while ((await readLease(twin, scope, 'dream')) === null) await letTimePass(fx, 1);
      let ran = false;
      const second = await withLease(
        twin,
        scope,
        'dream',
        () => {
          ran = true;
        },
        options,
      );
      expect(second).toMatchObject({ status: 'busy', holder: 'a' });
      expect(ran).toBe(false);
      release();
      expect(await first).toEqual({ status: 'done', value: 'dreamt' });
      expect(await readLease(twin, scope, 'dream')).toBeNull();
      expect(await withLease(twin, scope, 'dream', () => 'next', options)).toEqual({
        status: 'done',
        value: 'next',
      });
    });

    it('the lease is an entry under the reserved kioku/ root; a bad name is VALIDATION', async () => {
      const scope = randomScope();
      const lease = (await acquireLease(fx.store, scope, 'dream', {
        ttlMs: ttl(),
        holder: 'me',
        clock: clock(),
      }))!;
      const entry = await fx.store.get(scope, leaseKey('dream'));
      expect(leaseKey('dream')).toBe('kioku/dream/lease');
      expect(entry).toMatchObject({ version: 1, expiresAt: lease.expiresAt });
      expect(JSON.parse(entry!.value)).toEqual({ holder: 'me', acquiredAt: lease.acquiredAt });
      for (const bad of ['a/b', '', '../x', 'x'.repeat(200)]) {
        await expectKiokuError(acquireLease(fx.store, scope, bad, { ttlMs: ttl() }), 'VALIDATION');
      }
      await expectKiokuError(acquireLease(fx.store, scope, 'dream', { ttlMs: 0 }), 'VALIDATION');
    });
  });
}
