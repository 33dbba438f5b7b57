import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedTestConfig } from '../../vitest.shared.js';
import { versionsForThisNode } from './test/versions.js';

export default mergeConfig(
  sharedTestConfig,
  defineConfig({
    test: {
      include: ['test/**/*.test.ts'],
      projects: versionsForThisNode().map((version) => ({
        extends: true,
        resolve: { alias: version.alias },
        test: { name: version.name, provide: { aiSdk: version.name } },
      })),
    },
  }),
);
