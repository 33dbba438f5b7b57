import { defineConfig } from 'vitest/config';

/** Shared vitest settings: resolve sibling packages to their TypeScript source (no build needed). */
export const sharedTestConfig = defineConfig({
  resolve: { conditions: ['@kioku/source'] },
  ssr: { resolve: { conditions: ['@kioku/source'] } },
  test: {
    globals: false,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
