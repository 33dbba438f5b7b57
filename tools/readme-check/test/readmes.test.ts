import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readmeExamples, typecheckExamples } from '../src/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const examplesDir = path.join(root, 'tools/readme-check/examples');

/** The root README and every package's, app's and tool's. */
function readmes(): string[] {
  const found = ['README.md'];
  for (const group of ['packages', 'apps', 'tools']) {
    for (const entry of readdirSync(path.join(root, group), { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const readme = path.join(group, entry.name, 'README.md');
      if (readdirSync(path.join(root, group, entry.name)).includes('README.md')) found.push(readme);
    }
  }
  return found;
}

describe('README examples', () => {
  it('finds standalone blocks, leaves fragments out and honours a location comment', () => {
    const fixture = path.relative(root, path.join(here, 'fixtures/pkg/README.md'));
    const examples = readmeExamples(root, fixture, examplesDir);
    expect(examples.map((e) => e.line)).toEqual([12, 21, 31]);
    expect(examples[2]!.file).toBe(path.join(root, 'tools/readme-check/test/as-if-here.ts'));
    expect(examples[0]!.file.startsWith(examplesDir)).toBe(true);
  });

  it('reports a misused API at the README line it is on, and only there', () => {
    const fixture = path.relative(root, path.join(here, 'fixtures/pkg/README.md'));
    const errors = typecheckExamples(root, readmeExamples(root, fixture, examplesDir));
    expect(errors).toEqual([
      { at: `${fixture}:15`, message: expect.stringMatching(/^TS2322: Type 'number' is not assignable/) },
    ]);
  });

  it('every standalone TypeScript example in the repository compiles against the current API', () => {
    const examples = readmes().flatMap((readme) => readmeExamples(root, readme, examplesDir));
    // Guards the finder: the READMEs hold about twenty programs.
    expect(examples.length).toBeGreaterThanOrEqual(15);
    const errors = typecheckExamples(root, examples);
    expect(errors.map((e) => `${e.at} ${e.message}`)).toEqual([]);
  }, 120_000);
});
