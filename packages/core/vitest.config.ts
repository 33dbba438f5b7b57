import { configDefaults, defineConfig, mergeConfig } from 'vitest/config';
import { sharedTestConfig } from '../../vitest.shared.js';

/**
 * Test files that change what every later file in the same worker would see: module mocks (`vi.mock`),
 * fake timers, OpenTelemetry's global providers and context manager. Each runs in a fresh module graph.
 */
const ISOLATED = [
  'test/prepared-prompt.test.ts',
  'test/tokenizer-bpe.test.ts',
  'test/tokenizer-long-pieces.test.ts',
  'test/lifecycle/lease.test.ts',
  'test/telemetry/**/*.test.ts',
];

// The other files share one module graph per worker (`isolate: false`): loading the library's modules
// again for each of ~80 files was most of this package's test time (import 150 s of 240 s in CI).
export default mergeConfig(
  sharedTestConfig,
  defineConfig({
    test: {
      projects: [
        { extends: true, test: { name: 'isolated', include: ISOLATED } },
        {
          extends: true,
          test: {
            name: 'shared',
            include: ['test/**/*.test.ts'],
            exclude: [...configDefaults.exclude, ...ISOLATED],
            isolate: false,
          },
        },
      ],
    },
  }),
);
