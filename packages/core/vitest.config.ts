import { mergeConfig } from 'vitest/config';
import { sharedModuleGraph, sharedTestConfig } from '../../vitest.shared.js';

export default mergeConfig(
  sharedTestConfig,
  sharedModuleGraph([
    'test/prepared-prompt.test.ts', // vi.mock
    'test/tokenizer-bpe.test.ts', // vi.mock
    'test/tokenizer-long-pieces.test.ts', // vi.mock
    'test/lifecycle/lease.test.ts', // fake timers
    'test/telemetry/**/*.test.ts', // OpenTelemetry's globals
  ]),
);
