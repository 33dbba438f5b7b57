import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedTestConfig } from '../../vitest.shared.js';

/**
 * How readme-check runs a README example that is a test file (first line `// test/….test.ts`): with
 * `--root` its own directory, against the packages' source like every test here.
 */
export default mergeConfig(
  sharedTestConfig,
  defineConfig({
    cacheDir: '.vitest-cache',
    // JSON results in the example's own directory: the ones under node_modules (linked to this tool's) are
    // this tool's, which CI reads.
    test: { include: ['**/*.test.ts'], outputFile: { json: '.vitest-cache/results.json' } },
  }),
);
