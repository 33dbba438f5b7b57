import type { Scope, StoreKind } from '@kioku/core';
import {
  type RestoreOptions,
  type RestoreReport,
  SNAPSHOT_FORMAT,
  SNAPSHOT_SCHEMA_VERSION,
  type SnapshotEnvelope,
  type SnapshotSelector,
} from '@kioku/core/store';
import { describe, expect, it } from 'vitest';
import type { Fixture, SuiteContext } from './harness.js';
import { canonicalRecords, expectKiokuError, randomId } from './helpers.js';

/** The snapshot half of every store contract. */
export interface SnapshotStore<R> {
  snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<R>>;
  restore(snapshot: unknown, options?: RestoreOptions): Promise<RestoreReport>;
}

/** The record type a store's snapshots carry. */
export type RecordOf<S> = S extends SnapshotStore<infer R> ? R : never;

/** What the shared snapshot tests need to know about one store kind. */
export interface SnapshotSpec<S extends SnapshotStore<unknown>> {
  kind: StoreKind;
  /** A scope of the shape this kind is written with (plans need a thread). */
  scope(): Scope;
  /** Core's in-memory store of this kind, on the test's clock: the other backend of the round trips. */
  reference(ctx: SuiteContext): S;
  /** Write a few representative records under `scope`, letting time pass between writes. */
  seed(store: S, scope: Scope, fx: Fixture<S>): Promise<void>;
  /** Change, add and remove data inside the partitions `seed` wrote (restore must undo all of it). */
  mutate(store: S, scope: Scope, fx: Fixture<S>): Promise<void>;
  /** Everything the ordinary API shows of `scope` (after `seed`), to compare before and after. */
  view(store: S, scope: Scope): Promise<unknown>;
  userIdOf(record: RecordOf<S>): string;
  /** A copy of `record` whose id (or key) is invalid. */
  withBadId(record: RecordOf<S>): unknown;
}

const OTHER_KIND: Record<StoreKind, StoreKind> = {
  facts: 'documents',
  documents: 'facts',
  plans: 'working',
  working: 'plans',
  sessions: 'details',
  details: 'sessions',
};

/** Snapshot and restore tests shared by every store kind. */
export function snapshotTests<S extends SnapshotStore<unknown>>(fx: Fixture<S>, spec: SnapshotSpec<S>): void {
  const userIdOf = (record: unknown) => spec.userIdOf(record as RecordOf<S>);
  const seeded = async (store: S) => {
    const a = spec.scope();
    const b = spec.scope();
    await spec.seed(store, a, fx);
    await spec.seed(store, b, fx);
    return { a, b };
  };

  describe('snapshot and restore', () => {
    it('snapshot({userId}) holds exactly that user’s records in a valid envelope', async () => {
      const { a, b } = await seeded(fx.store);
      const env = await fx.store.snapshot({ userId: a.userId });
      expect(env.format).toBe(SNAPSHOT_FORMAT);
      expect(env.schemaVersion).toBe(SNAPSHOT_SCHEMA_VERSION);
      expect(env.kind).toBe(spec.kind);
      expect(env.selector).toEqual({ userId: a.userId });
      expect(Number.isNaN(Date.parse(env.createdAt))).toBe(false);
      expect(env.records.length).toBeGreaterThan(0);
      expect(env.records.every((r) => userIdOf(r) === a.userId)).toBe(true);
      const envB = await fx.store.snapshot({ userId: b.userId });
      expect(envB.records.length).toBe(env.records.length);
      expect(envB.records.every((r) => userIdOf(r) === b.userId)).toBe(true);
    });

    it('snapshot({allUsers: true}) holds every user’s records', async () => {
      const { a, b } = await seeded(fx.store);
      const all = await fx.store.snapshot({ allUsers: true });
      expect(all.selector).toEqual({ allUsers: true });
      const users = new Set(all.records.map((r) => userIdOf(r)));
      expect(users.has(a.userId) && users.has(b.userId)).toBe(true);
      const onlyA = await fx.store.snapshot({ userId: a.userId });
      const ofA = all.records.filter((r) => userIdOf(r) === a.userId);
      expect(canonicalRecords(ofA)).toEqual(canonicalRecords(onlyA.records));
    });

    it('a snapshot of a user with no data is empty', async () => {
      await seeded(fx.store);
      const env = await fx.store.snapshot({ userId: randomId('nobody') });
      expect(env.records).toEqual([]);
    });

    it('refuses an invalid selector', async () => {
      await expectKiokuError(fx.store.snapshot({ userId: '../x' }), 'VALIDATION');
      await expectKiokuError(fx.store.snapshot({} as SnapshotSelector), 'VALIDATION');
    });

    it('round-trips into a fresh store of the same backend', async () => {
      const { a } = await seeded(fx.store);
      const before = await spec.view(fx.store, a);
      const env = await fx.store.snapshot({ userId: a.userId });
      const target = await fx.fresh();
      const report = await target.restore(env);
      expect(report.records).toBe(env.records.length);
      const again = await target.snapshot({ userId: a.userId });
      expect(canonicalRecords(again.records)).toEqual(canonicalRecords(env.records));
      expect(await spec.view(target, a)).toEqual(before);
    });

    it('survives JSON serialization (what a file export does)', async () => {
      const { a } = await seeded(fx.store);
      const env = await fx.store.snapshot({ userId: a.userId });
      const target = await fx.fresh();
      await target.restore(JSON.parse(JSON.stringify(env)));
      const again = await target.snapshot({ userId: a.userId });
      expect(canonicalRecords(again.records)).toEqual(canonicalRecords(env.records));
    });

    it('migrates to core’s in-memory store (this backend → in-memory)', async () => {
      const { a } = await seeded(fx.store);
      const env = await fx.store.snapshot({ userId: a.userId });
      const reference = spec.reference(fx.ctx);
      await reference.restore(env);
      const again = await reference.snapshot({ userId: a.userId });
      expect(canonicalRecords(again.records)).toEqual(canonicalRecords(env.records));
      expect(await spec.view(reference, a)).toEqual(await spec.view(fx.store, a));
    });

    it('migrates from core’s in-memory store (in-memory → this backend)', async () => {
      const reference = spec.reference(fx.ctx);
      const { a } = await seeded(reference);
      const env = await reference.snapshot({ userId: a.userId });
      await fx.store.restore(env);
      const again = await fx.store.snapshot({ userId: a.userId });
      expect(canonicalRecords(again.records)).toEqual(canonicalRecords(env.records));
      expect(await spec.view(fx.store, a)).toEqual(await spec.view(reference, a));
    });

    it('restore replaces the partitions the snapshot contains', async () => {
      const { a, b } = await seeded(fx.store);
      const before = await spec.view(fx.store, a);
      const otherBefore = await spec.view(fx.store, b);
      const env = await fx.store.snapshot({ userId: a.userId });
      await spec.mutate(fx.store, a, fx);
      expect(await spec.view(fx.store, a)).not.toEqual(before);
      await fx.store.restore(env);
      expect(await spec.view(fx.store, a)).toEqual(before);
      expect(await spec.view(fx.store, b)).toEqual(otherBefore);
    });

    it('restore with {userId} accepts that user’s own snapshot', async () => {
      const { a } = await seeded(fx.store);
      const env = await fx.store.snapshot({ userId: a.userId });
      const target = await fx.fresh();
      await target.restore(env, { userId: a.userId });
      expect(await spec.view(target, a)).toEqual(await spec.view(fx.store, a));
    });

    it('restore(snapshot of B, {userId: A}) is refused with SCOPE and writes nothing', async () => {
      const a = spec.scope();
      await spec.seed(fx.store, a, fx);
      const before = await spec.view(fx.store, a);
      const source = await fx.fresh();
      const b = spec.scope();
      await spec.seed(source, b, fx);
      const envB = await source.snapshot({ userId: b.userId });
      const emptyB = await spec.view(fx.store, b);
      await expectKiokuError(fx.store.restore(envB, { userId: a.userId }), 'SCOPE');
      expect(await spec.view(fx.store, a)).toEqual(before);
      expect(await spec.view(fx.store, b)).toEqual(emptyB);
      expect((await fx.store.snapshot({ userId: b.userId })).records).toEqual([]);
    });

    describe('bad snapshots are refused and nothing of them is written', () => {
      /** Seed A in the store and B elsewhere; return B's snapshot to corrupt. */
      const setup = async () => {
        const a = spec.scope();
        await spec.seed(fx.store, a, fx);
        const source = await fx.fresh();
        const b = spec.scope();
        await spec.seed(source, b, fx);
        const envB = await source.snapshot({ userId: b.userId });
        const beforeA = await spec.view(fx.store, a);
        const emptyB = await spec.view(fx.store, b);
        const intact = async () => {
          expect(await spec.view(fx.store, a)).toEqual(beforeA);
          expect(await spec.view(fx.store, b)).toEqual(emptyB);
          expect((await fx.store.snapshot({ userId: b.userId })).records).toEqual([]);
        };
        return { envB, intact };
      };

      it('unknown schemaVersion → UNSUPPORTED', async () => {
        const { envB, intact } = await setup();
        await expectKiokuError(fx.store.restore({ ...envB, schemaVersion: 999 }), 'UNSUPPORTED');
        await intact();
      });

      it('missing records → VALIDATION', async () => {
        const { envB, intact } = await setup();
        const { records: _records, ...noRecords } = envB;
        await expectKiokuError(fx.store.restore(noRecords), 'VALIDATION');
        await intact();
      });

      it('wrong kind → VALIDATION', async () => {
        const { envB, intact } = await setup();
        await expectKiokuError(fx.store.restore({ ...envB, kind: OTHER_KIND[spec.kind] }), 'VALIDATION');
        await intact();
      });

      it('wrong format or not an object → VALIDATION', async () => {
        const { envB, intact } = await setup();
        await expectKiokuError(fx.store.restore({ ...envB, format: 'something-else' }), 'VALIDATION');
        await expectKiokuError(fx.store.restore(null), 'VALIDATION');
        await expectKiokuError(fx.store.restore('snapshot'), 'VALIDATION');
        await expectKiokuError(fx.store.restore({ ...envB, records: 'nope' }), 'VALIDATION');
        await intact();
      });

      it('a record with a bad id (after valid ones) → VALIDATION', async () => {
        const { envB, intact } = await setup();
        const first = envB.records[0]!;
        const bad = { ...envB, records: [...envB.records, spec.withBadId(first as RecordOf<S>)] };
        await expectKiokuError(fx.store.restore(bad), 'VALIDATION');
        await intact();
      });

      it('two records with the same id in one partition → VALIDATION', async () => {
        const { envB, intact } = await setup();
        const dup = { ...envB, records: [...envB.records, envB.records[0]] };
        await expectKiokuError(fx.store.restore(dup), 'VALIDATION');
        await intact();
      });

      it('a record that is not an object → VALIDATION', async () => {
        const { envB, intact } = await setup();
        await expectKiokuError(fx.store.restore({ ...envB, records: [...envB.records, 42] }), 'VALIDATION');
        await intact();
      });
    });
  });
}
