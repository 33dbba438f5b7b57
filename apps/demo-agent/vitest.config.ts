import { defineConfig, mergeConfig } from 'vitest/config';
import { childProcessWorkers, sharedTestConfig } from '../../vitest.shared.js';

// Tests run the demo as child processes, several in one test (each many seconds on a busy 2-core
// machine): a hang limit far above that, not the shared 300 s.
export default mergeConfig(
  sharedTestConfig,
  defineConfig({
    test: { include: ['test/**/*.test.ts'], testTimeout: 600_000, maxWorkers: childProcessWorkers },
  }),
);
