import { defineConfig, mergeConfig } from 'vitest/config';
import { childProcessWorkers, sharedTestConfig } from '../../vitest.shared.js';

export default mergeConfig(
  sharedTestConfig,
  defineConfig({
    test: {
      include: ['test/**/*.test.ts'],
      // One fresh PostgreSQL database per run, created and dropped here (see test/global-setup.ts).
      globalSetup: ['test/global-setup.ts'],
      // Tests run the real CLI as child processes, up to seven in one test (about 10 s each on a busy
      // 2-core machine; 65 s seen for one test): a hang limit far above that, not the shared 300 s.
      testTimeout: 600_000,
      maxWorkers: childProcessWorkers,
    },
  }),
);
