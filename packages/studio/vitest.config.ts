import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedTestConfig } from '../../vitest.shared.js';

// A real browser drives these tests: a generous limit that no machine's speed comes near (each step waits
// for the page's own events), one file at a time (they share Chromium's memory on a 2-core machine).
export default mergeConfig(
  sharedTestConfig,
  defineConfig({
    test: {
      include: ['test/**/*.test.ts'],
      testTimeout: 600_000,
      hookTimeout: 600_000,
      fileParallelism: false,
    },
  }),
);
