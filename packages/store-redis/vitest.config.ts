import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedTestConfig } from '../../vitest.shared.js';

export default mergeConfig(
  sharedTestConfig,
  defineConfig({
    test: {
      include: ['test/**/*.test.ts'],
      // Checks the server once per run: unreachable fails the run under CI (see test/global-setup.ts).
      globalSetup: ['test/global-setup.ts'],
    },
  }),
);
