import { defineConfig } from 'vitest/config';

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
  },
});
