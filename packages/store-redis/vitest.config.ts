import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedModuleGraph, sharedTestConfig } from '../../vitest.shared.js';

export default mergeConfig(
  mergeConfig(
    sharedTestConfig,
    // Checks the server once per run: unreachable fails the run under CI (see test/global-setup.ts).
    defineConfig({ test: { globalSetup: ['test/global-setup.ts'] } }),
  ),
  sharedModuleGraph([]),
);
