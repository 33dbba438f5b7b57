import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedModuleGraph, sharedTestConfig } from '../../vitest.shared.js';

export default mergeConfig(
  mergeConfig(
    sharedTestConfig,
    defineConfig({
      test: {
        // One fresh database per run, created and dropped here (see test/global-setup.ts).
        globalSetup: ['test/global-setup.ts'],
      },
    }),
  ),
  sharedModuleGraph(['test/query-text.test.ts' /* OpenTelemetry's globals */]),
);
