import path from 'node:path';
import { STORE_KINDS } from '@kioku/core';
import { type ErasureReceipt, verifyErased } from '@kioku/core/passes';
import { ManualClock } from '@kioku/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { openStores } from '../src/index.js';
import { BOB, fillAllKinds, kioku, kiokuInProcess, pgBackend, redisBackend, tempDir } from './helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function sqliteStore() {
  const { dir, cleanup } = await tempDir();
  cleanups.push(cleanup);
  return `sqlite:${path.join(dir, 'kioku.db')}`;
}

/** Every kind of every user in the store, as comparable records. */
async function everything(spec: string, userId: string) {
  const stores = await openStores(spec);
  try {
    const out: Record<string, unknown> = {};
    for (const kind of STORE_KINDS) out[kind] = (await stores[kind].snapshot({ userId })).records;
    return out;
  } finally {
    await stores.close();
  }
}

describe('kioku forget', () => {
  for (const [name, backend] of [
    ['sqlite', sqliteStore],
    ['postgres', async () => pgBackend()],
    ['redis', async () => redisBackend()],
  ] as const) {
    it(`${name}: a dry run predicts the receipt; forget erases alice (every agent) and only her`, async () => {
      const store = await backend();
      const stores = await openStores(store);
      await fillAllKinds(stores, new ManualClock(Date.UTC(2025, 0, 1)));
      await stores.close();
      const aliceBefore = await everything(store, 'alice');
      const bobBefore = await everything(store, BOB.userId);

      const dry = await kioku(['forget', '--store', store, '--user', 'alice', '--dry-run', '--json']);
      expect(dry.code, dry.stderr).toBe(0);
      const predicted = JSON.parse(dry.stdout) as ErasureReceipt;
      expect(predicted).toMatchObject({ format: 'kioku.erasure-receipt', userId: 'alice', dryRun: true });
      expect(predicted.total).toBeGreaterThan(10);
      expect(predicted.removed.find((r) => r.kind === 'facts')?.backend).toBe(name);
      expect(await everything(store, 'alice')).toEqual(aliceBefore);

      const real = await kioku(['forget', '--store', store, '--user', 'alice']);
      expect(real.code, real.stderr).toBe(0);
      expect(real.stdout).toContain(`Forgot ${predicted.total} records of user "alice":`);
      expect(real.stdout).toContain(`digest ${predicted.digest}`);
      expect(real.stdout).toMatch(/verified erased \(1 pass\)/);
      const after = await openStores(store);
      try {
        expect(await verifyErased(after, 'alice')).toEqual({ erased: true });
      } finally {
        await after.close();
      }
      expect(await everything(store, BOB.userId)).toEqual(bobBefore);

      const again = await kioku(['forget', '--store', store, '--user', 'alice', '--json']);
      expect(again.code, again.stderr).toBe(0);
      expect((JSON.parse(again.stdout) as ErasureReceipt).total).toBe(0);
    });
  }

  it('refuses a missing or bad --user and a missing --store with usage errors', async () => {
    const store = await sqliteStore();
    const noUser = await kiokuInProcess(['forget', '--store', store]);
    expect(noUser.code).toBe(2);
    expect(noUser.stderr).toContain('--user is required');
    const badUser = await kiokuInProcess(['forget', '--store', store, '--user', '../bob']);
    expect(badUser.code).toBe(2);
    expect(badUser.stderr).toContain('--user "../bob" is not a valid user id');
    const noStore = await kiokuInProcess(['forget', '--user', 'alice']);
    expect(noStore.code).toBe(2);
    expect(noStore.stderr).toContain('--store is required');
    const help = await kiokuInProcess(['forget', '--help']);
    expect(help.stdout).toContain('erasure receipt');
  });
});

describe('kioku forget --fact, --suppressed, --revoke', () => {
  it('forgets one fact, keeps it off the extraction path, shows the list without text and revokes an entry', async () => {
    const store = await sqliteStore();
    const stores = await openStores(store);
    const fact = await stores.facts.create(
      { userId: 'alice' },
      { content: 'The staging vault passphrase is heron-7731' },
    );
    const kept = await stores.facts.create({ userId: 'alice' }, { content: 'Likes green tea' });
    await stores.close();

    const forgot = await kiokuInProcess(['forget', '--store', store, '--user', 'alice', '--fact', fact.id]);
    expect(forgot.code, forgot.stderr).toBe(0);
    expect(forgot.stdout).toContain(`Forgot 1 fact of user "alice" (${fact.id})`);
    const after = await openStores(store);
    try {
      expect((await after.facts.list({ userId: 'alice' })).map((f) => f.id)).toEqual([kept.id]);
    } finally {
      await after.close();
    }

    const listed = await kiokuInProcess([
      'forget',
      '--store',
      store,
      '--user',
      'alice',
      '--suppressed',
      '--json',
    ]);
    expect(listed.code, listed.stderr).toBe(0);
    const entries = JSON.parse(listed.stdout) as { hash: string; at: string }[];
    expect(entries).toHaveLength(1);
    expect(listed.stdout).not.toMatch(/heron|7731|passphrase/);

    const again = await kiokuInProcess(['forget', '--store', store, '--user', 'alice', '--fact', fact.id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`NOT_FOUND: No fact "${fact.id}" of user "alice"`);

    const revoked = await kiokuInProcess([
      'forget',
      '--store',
      store,
      '--user',
      'alice',
      '--revoke',
      entries[0]!.hash,
    ]);
    expect(revoked.code, revoked.stderr).toBe(0);
    const empty = await kiokuInProcess(['forget', '--store', store, '--user', 'alice', '--suppressed']);
    expect(empty.stdout).toContain('Nothing suppressed for user "alice".');

    const both = await kiokuInProcess([
      'forget',
      '--store',
      store,
      '--user',
      'alice',
      '--suppressed',
      '--dry-run',
    ]);
    expect(both.code).toBe(2);
  });
});

describe('kioku import after a forget', () => {
  it('leaves the forgotten fact out of an older bundle and keeps the suppression list', async () => {
    const store = await sqliteStore();
    const stores = await openStores(store);
    const fact = await stores.facts.create(
      { userId: 'alice' },
      { content: 'The staging vault passphrase is heron-7731' },
    );
    const kept = await stores.facts.create({ userId: 'alice' }, { content: 'Likes green tea' });
    await stores.close();
    const backup = await kiokuInProcess(['export', '--from', store, '--user', 'alice']);
    expect(backup.code, backup.stderr).toBe(0);

    const forgot = await kiokuInProcess(['forget', '--store', store, '--user', 'alice', '--fact', fact.id]);
    expect(forgot.code, forgot.stderr).toBe(0);

    const imported = await kiokuInProcess(['import', '--to', store, '--user', 'alice'], backup.stdout);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toContain("1 forgotten fact left out: on the user's suppression list");
    const after = await openStores(store);
    try {
      expect((await after.facts.list({ userId: 'alice' })).map((f) => f.id)).toEqual([kept.id]);
    } finally {
      await after.close();
    }
    const listed = await kiokuInProcess([
      'forget',
      '--store',
      store,
      '--user',
      'alice',
      '--suppressed',
      '--json',
    ]);
    expect(JSON.parse(listed.stdout)).toHaveLength(1);
  });
});
