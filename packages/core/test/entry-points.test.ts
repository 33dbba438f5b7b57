import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as adapter from '../src/adapter.js';
import * as root from '../src/index.js';
import * as testing from '../src/testing.js';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  exports: Record<string, { '@kioku/source'?: string; types?: string; default?: string } | string>;
};

describe('entry points', () => {
  it('every value is exported from exactly one of @kioku/core, /adapter and /testing', () => {
    const entries = { root, adapter, testing };
    const owners = new Map<string, string[]>();
    for (const [entry, mod] of Object.entries(entries)) {
      for (const name of Object.keys(mod)) owners.set(name, [...(owners.get(name) ?? []), entry]);
    }
    expect([...owners].filter(([, where]) => where.length > 1)).toEqual([]);
  });

  it('an app finds the builder and stores at the root; adapter seams and rules are under /adapter', () => {
    for (const name of ['KiokuBuilder', 'createInMemoryStores', 'withEmbeddings', 'runWithScope', 'dream']) {
      expect(root).toHaveProperty(name);
    }
    for (const name of ['PartitionedFactStore', 'newFact', 'planRestore', 'parseOrThrow', 'LexicalIndex']) {
      expect(adapter).toHaveProperty(name);
      expect(root).not.toHaveProperty(name);
    }
    expect(testing).toHaveProperty('ManualClock');
    expect(root).not.toHaveProperty('ManualClock');
  });

  it('package.json maps each entry point to its source and its build', () => {
    for (const [path, file] of [
      ['.', 'index'],
      ['./adapter', 'adapter'],
      ['./testing', 'testing'],
    ] as const) {
      expect(pkg.exports[path]).toEqual({
        '@kioku/source': `./src/${file}.ts`,
        types: `./dist/${file}.d.ts`,
        default: `./dist/${file}.js`,
      });
    }
  });
});
