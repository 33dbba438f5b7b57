import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedTestConfig } from '../../vitest.shared.js';

export default mergeConfig(
  sharedTestConfig,
  // Two README examples run at a time, each its own process (see test/readmes.test.ts).
  defineConfig({ test: { include: ['test/**/*.test.ts'], maxConcurrency: 2 } }),
);
