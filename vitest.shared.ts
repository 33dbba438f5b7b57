import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

/** Shared vitest settings: resolve sibling packages to their TypeScript source (no build needed). */
export const sharedTestConfig = defineConfig({
  resolve: { conditions: ['@kioku/source'] },
  ssr: { resolve: { conditions: ['@kioku/source'] } },
  test: {
    globals: false,
    // A limit that only catches a hung test, never one that measures speed: on a busy 2-core machine the
    // slowest tests (a tokenizer compared with gpt-tokenizer over a large sample, a full README typecheck,
    // child processes that build a store) take several times their quiet duration (46.8 s seen for a 10 s
    // test). No test or hook sets a lower limit of its own; a child process a test spawns is killed at
    // 240 s, before this, so a hung child reports its output.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // The results as JSON too, where .ci/failed-tests.mjs finds them: CI prints the failures again at the
    // end of its log, where a failure of one package among many parallel ones is otherwise far above.
    reporters: ['default', 'json'],
    outputFile: { json: 'node_modules/.vitest/results.json' },
  },
});

/**
 * Test files that share one module graph per worker (`isolate: false`), except `isolated`: the files
 * that change what a later file in the same worker would see (module mocks, fake timers, OpenTelemetry's
 * global providers or context manager, process.env), which each get a fresh one. Loading the package's
 * modules again for every file was most of the time of the suites with many small files (core: import
 * 150 s of 240 s in CI). Keep a file that changes such state in `isolated`.
 */
export function sharedModuleGraph(isolated: readonly string[], include = ['test/**/*.test.ts']) {
  return defineConfig({
    test: {
      projects: [
        ...(isolated.length > 0
          ? [{ extends: true as const, test: { name: 'isolated', include: [...isolated] } }]
          : []),
        {
          extends: true as const,
          test: {
            name: 'shared',
            include,
            exclude: [...configDefaults.exclude, ...isolated],
            isolate: false,
          },
        },
      ],
    },
  });
}

/**
 * Workers for suites whose tests mostly wait on the child processes they start (the CLI's, the demo's):
 * two files at a time even on a 2-core machine, where vitest's default (cores - 1) runs one after the
 * other (the CLI's suite: 143 s instead of about 260 s on an idle 2-core machine).
 */
export const childProcessWorkers = Math.max(2, availableParallelism() - 1);
