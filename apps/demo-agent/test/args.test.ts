import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDemoArgs } from '../src/args.js';

describe('parseDemoArgs', () => {
  it('defaults to JSON in ./.kioku-data for demo-user', () => {
    const args = parseDemoArgs([], {});
    expect(args.userId).toBe('demo-user');
    expect(args.dataDir).toBe(path.resolve('.kioku-data'));
    expect(args.sandbox).toBe(path.join(args.dataDir, 'sandbox'));
    expect(Object.values(args.backends)).toEqual(['json', 'json', 'json', 'json', 'json']);
  });

  it('picks a backend per kind from flags over env over --store', () => {
    const args = parseDemoArgs(['--store', 'sqlite', '--facts', 'postgres', '--user', 'bob'], {
      KIOKU_STORE_WORKING: 'redis',
      KIOKU_DATA_DIR: '/tmp/x',
    });
    expect(args.backends).toEqual({
      facts: 'postgres',
      plans: 'sqlite',
      working: 'redis',
      sessions: 'sqlite',
      details: 'sqlite',
    });
    expect(args.userId).toBe('bob');
    expect(args.dataDir).toBe(path.resolve('/tmp/x'));
  });

  it('refuses unknown backends and flags', () => {
    expect(() => parseDemoArgs(['--store', 'mongo'], {})).toThrow(/unknown backend "mongo"/);
    expect(() => parseDemoArgs(['--nope'], {})).toThrow();
  });
});
