import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as adapter from '../src/adapter.js';
import * as root from '../src/index.js';
import * as model from '../src/model.js';
import * as passes from '../src/passes.js';
import * as store from '../src/store.js';
import * as testing from '../src/testing.js';

const ENTRIES = { index: root, store, adapter, passes, model, testing };

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  exports: Record<string, { '@kioku/source'?: string; types?: string; default?: string } | string>;
};

/** The names an entry point's committed API report lists (values and types). */
function reportedNames(entry: string): string[] {
  const report = readFileSync(new URL(`../api/${entry}.api.md`, import.meta.url), 'utf8');
  return [
    ...report.matchAll(
      /^export (?:declare )?(?:abstract )?(?:class|interface|type|function|const|enum|namespace) (\w+)/gm,
    ),
  ].map((m) => m[1]!);
}

describe('entry points', () => {
  it('every value is exported from exactly one entry point', () => {
    const owners = new Map<string, string[]>();
    for (const [entry, mod] of Object.entries(ENTRIES)) {
      for (const name of Object.keys(mod)) owners.set(name, [...(owners.get(name) ?? []), entry]);
    }
    expect([...owners].filter(([, where]) => where.length > 1)).toEqual([]);
  });

  it("the root holds an app author's API on a page: at most 80 names, values and types", () => {
    const names = reportedNames('index');
    expect(names.length).toBeGreaterThan(0);
    expect(names.length).toBeLessThanOrEqual(80);
    for (const value of Object.keys(root)) expect(names).toContain(value);
  });

  it('an app finds the builder and stores at the root; each audience finds its part under its subpath', () => {
    for (const name of [
      'KiokuBuilder',
      'createInMemoryStores',
      'withEmbeddings',
      'runWithScope',
      'factMemory',
    ]) {
      expect(root).toHaveProperty(name);
    }
    for (const name of ['PartitionedFactStore', 'newFact', 'planRestore', 'parseOrThrow', 'LexicalIndex']) {
      expect(adapter).toHaveProperty(name);
      expect(root).not.toHaveProperty(name);
    }
    for (const name of ['dream', 'extractSession', 'forgetUser', 'ChangesetLog'])
      expect(passes).toHaveProperty(name);
    for (const name of ['FactSchema', 'InMemoryFactStore', 'reembed']) expect(store).toHaveProperty(name);
    for (const name of ['generateObject', 'toOpenAITool', 'executeToolCall'])
      expect(model).toHaveProperty(name);
    expect(testing).toHaveProperty('ManualClock');
    expect(root).not.toHaveProperty('ManualClock');
  });

  it('prompts and tuning constants stay private', () => {
    const exported = Object.values(ENTRIES).flatMap((mod) => Object.keys(mod));
    for (const name of [
      'DEFAULT_EXTRACTION_DIRECTIVE',
      'INJECTION_RULES',
      'RECALL_HEADER',
      'DEDUP_THRESHOLD',
    ]) {
      expect(exported).not.toContain(name);
    }
  });

  it('package.json maps each entry point to its source and its build', () => {
    for (const file of Object.keys(ENTRIES)) {
      const path = file === 'index' ? '.' : `./${file}`;
      expect(pkg.exports[path]).toEqual({
        '@kioku/source': `./src/${file}.ts`,
        types: `./dist/${file}.d.ts`,
        default: `./dist/${file}.js`,
      });
    }
    expect(Object.keys(pkg.exports).sort()).toEqual(
      [...Object.keys(ENTRIES).map((f) => (f === 'index' ? '.' : `./${f}`)), './package.json'].sort(),
    );
  });
});
