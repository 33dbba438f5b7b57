import path from 'node:path';
import { isKiokuError } from '@kioku/core';
import { afterEach, describe, expect, it } from 'vitest';
import { openStores } from '../src/index.js';
import { ALICE, pgBackend, pgUrl, tempDir } from './helpers.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function dir(): Promise<string> {
  const { dir, cleanup } = await tempDir();
  cleanups.push(cleanup);
  return dir;
}

describe('openStores: one bundle from backend specs (the CLI and the demo open stores this way)', () => {
  it('opens one spec for every kind, set up, and the data is there when opened again', async () => {
    const file = path.join(await dir(), 'kioku.db');
    const stores = await openStores(`sqlite:${file}`);
    const fact = await stores.facts.create(ALICE, { content: 'Opened from a spec' });
    await stores.close();
    await stores.close();
    const again = await openStores(`sqlite:${file}`);
    expect(await again.facts.get(ALICE, fact.id)).toEqual(fact);
    await again.close();
  });

  it('takes each kind from its own backend, opening each backend once', async () => {
    const root = await dir();
    const file = path.join(root, 'kioku.db');
    const stores = await openStores({ default: `json:${root}/json`, facts: `sqlite:${file}` });
    await stores.facts.create(ALICE, { content: 'In SQLite' });
    await stores.working.set(ALICE, 'session/t1/x', 'in JSON', { ttlMs: 60_000 });
    await stores.close();
    const sqliteOnly = await openStores(`sqlite:${file}`);
    const jsonOnly = await openStores(`json:${root}/json`);
    expect((await sqliteOnly.facts.list(ALICE)).map((f) => f.content)).toEqual(['In SQLite']);
    expect(await sqliteOnly.working.get(ALICE, 'session/t1/x')).toBeNull();
    expect((await jsonOnly.working.get(ALICE, 'session/t1/x'))?.value).toBe('in JSON');
    expect(await jsonOnly.facts.list(ALICE)).toEqual([]);
    await sqliteOnly.close();
    await jsonOnly.close();
  });

  it('refuses a bad spec or a kind without a backend, naming what to write', async () => {
    await expect(openStores('mysql://db')).rejects.toThrow(/Unknown backend "mysql:".*json:\.\/data/);
    await expect(openStores({ facts: `json:${await dir()}` })).rejects.toThrow(
      /No backend for documents: give a default spec/,
    );
  });

  it.skipIf(!pgUrl)('opens PostgreSQL from a URL (schema created by setup)', async () => {
    const stores = await openStores(pgBackend());
    try {
      const fact = await stores.facts.create(ALICE, { content: 'In PostgreSQL' });
      expect(await stores.facts.get(ALICE, fact.id)).toEqual(fact);
    } finally {
      await stores.close();
    }
  });

  it('an unreachable Redis is a STORAGE error naming the URL, and nothing is left open', async () => {
    const error = await openStores('redis://127.0.0.1:1/').catch((e: unknown) => e);
    expect(isKiokuError(error) && error.code).toBe('STORAGE');
    expect(String((error as Error).message)).toContain('redis://127.0.0.1:1');
  });
});
