import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  checkExample,
  EXAMPLE_LIMIT_MS,
  readmeExamples,
  repositoryReadmes,
  ServerUnavailableError,
  typecheckExamples,
} from '../src/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const examplesDir = path.join(root, 'tools/readme-check/examples');
const examples = repositoryReadmes(root).flatMap((readme) => readmeExamples(root, readme, examplesDir));

describe('README examples', () => {
  it('finds standalone blocks, leaves fragments out and reads their markers', () => {
    const fixture = path.relative(root, path.join(here, 'fixtures/pkg/README.md'));
    const examples = readmeExamples(root, fixture, examplesDir);
    expect(examples.map((e) => e.line)).toEqual([12, 21, 31]);
    expect(examples.every((e) => e.file.startsWith(examplesDir))).toBe(true);
    expect(examples[0]).toMatchObject({
      needs: [],
      replies: [],
      testFile: undefined,
      uninstalled: ['@kioku/core'],
    });
    expect(examples[2]).toMatchObject({
      needs: ['model'],
      testFile: 'test/model.test.ts',
      replies: [{ call: 'create_memory', arguments: { content: 'Prefers tea' } }, 'Noted.', { json: {} }],
    });
  });

  it('reports a misused API at the README line it is on, and only there', () => {
    const fixture = path.relative(root, path.join(here, 'fixtures/pkg/README.md'));
    const errors = typecheckExamples(root, readmeExamples(root, fixture, examplesDir));
    expect(errors).toEqual([
      { at: `${fixture}:15`, message: expect.stringMatching(/^TS2322: Type 'number' is not assignable/) },
    ]);
  });

  it('every package an example imports is on an install line above it', () => {
    const uninstalled = examples.filter((e) => e.uninstalled.length > 0);
    expect(uninstalled.map((e) => `${e.readme}:${e.line} imports ${e.uninstalled.join(', ')}`)).toEqual([]);
  });

  it(
    'every standalone TypeScript example in the repository compiles against the current API',
    () => {
      // Guards the finder: the READMEs hold about forty programs.
      expect(examples.length).toBeGreaterThanOrEqual(35);
      const errors = typecheckExamples(root, examples);
      expect(errors.map((e) => `${e.at} ${e.message}`)).toEqual([]);
    },
    // A generous limit, as for a run: the compile takes about a minute on a quiet machine, much more on a busy one.
    EXAMPLE_LIMIT_MS,
  );
});

// Each example is its own process; vitest's maxConcurrency (vitest.config.ts) bounds how many run at once.
describe.concurrent('every README example runs as pasted and prints what it computes', () => {
  it.for(examples)('$readme:$line', { timeout: EXAMPLE_LIMIT_MS + 120_000 }, async (example, { skip }) => {
    let failure: string | undefined;
    try {
      failure = await checkExample(example);
    } catch (error) {
      // PostgreSQL and Redis examples need the local servers: skipped outside CI, a failure under CI.
      if (process.env.CI || !(error instanceof ServerUnavailableError)) throw error;
      return skip(`${example.readme}:${example.line}: ${error.message}`);
    }
    if (failure) throw new Error(failure);
  });
});
