import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createInMemoryStores } from '@kioku/core';
import { afterEach, describe, expect, it } from 'vitest';
import { openStores, parseBackend, registerStoreAdapter } from '../src/index.js';
import { ALICE, kioku, packageDir, tempDir } from './helpers.js';

const fixture = path.join(packageDir, 'test', 'fixtures', 'file-map-adapter.ts');

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function dir(): Promise<string> {
  const { dir, cleanup } = await tempDir();
  cleanups.push(cleanup);
  return dir;
}

describe('third-party store adapters', () => {
  it('registerStoreAdapter makes a scheme a backend spec of openStores', async () => {
    const opened: string[] = [];
    const shared = createInMemoryStores();
    cleanups.push(
      registerStoreAdapter('testmem', (spec, context) => {
        opened.push(`${spec.location} as ${context.role}`);
        return shared;
      }),
    );
    const stores = await openStores('testmem:first');
    const fact = await stores.facts.create(ALICE, { content: 'Kept by a registered adapter' });
    expect(opened).toEqual(['first as target']);
    expect(await shared.facts.get(ALICE, fact.id)).toEqual(fact);
    await stores.close();
  });

  it('refuses built-in schemes and names KIOKU_ADAPTERS for an unknown one', async () => {
    expect(() => registerStoreAdapter('sqlite', () => createInMemoryStores())).toThrow(/built-in/);
    expect(() => parseBackend('nosuch:x')).toThrow(/Unknown backend "nosuch:".*KIOKU_ADAPTERS/);
  });

  it('KIOKU_ADAPTERS loads a module whose storeAdapters serve --to and --from, across processes', async () => {
    const root = await dir();
    const file = path.join(root, 'memory.filemap');
    const env = { KIOKU_ADAPTERS: fixture };
    const seed = await openStores(`json:${root}/json`);
    await seed.facts.create(ALICE, { content: 'Travels through a third-party adapter' });
    const session = await seed.sessions.create(ALICE);
    await seed.sessions.transcriptAppend(ALICE, session.id, { role: 'user', content: 'hello' });
    await seed.close();

    const migrated = await kioku(
      ['migrate', '--from', `json:${root}/json`, '--to', `filemap:${file}`, '--all-users'],
      { env, loadsTypeScript: true },
    );
    expect(migrated.stderr).toBe('');
    expect(migrated.code).toBe(0);
    // Side channel: the adapter's own file holds the records (one per transcript entry).
    const stored = JSON.parse(await readFile(file, 'utf8'));
    const keys = Object.values(stored.partitions as Record<string, { records: [string, string][] }>).flatMap(
      (p) => p.records.map(([key]) => key),
    );
    expect(keys).toContain('t:000000000000');

    const exported = await kioku(['export', '--from', `filemap:${file}`, '--all-users'], {
      env,
      loadsTypeScript: true,
    });
    expect(exported.code).toBe(0);
    expect(exported.stdout).toContain('Travels through a third-party adapter');

    const without = await kioku(['export', '--from', `filemap:${file}`, '--all-users']);
    expect(without.code).not.toBe(0);
    expect(without.stderr).toMatch(/Unknown backend "filemap:".*KIOKU_ADAPTERS/);
  });
});
