import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedTestConfig } from '../../vitest.shared.js';

export default mergeConfig(
  sharedTestConfig,
  defineConfig({
    test: {
      include: ['test/**/*.test.ts'],
      // One fresh PostgreSQL database per run, created and dropped here (see test/global-setup.ts).
      globalSetup: ['test/global-setup.ts'],
    },
  }),
);
