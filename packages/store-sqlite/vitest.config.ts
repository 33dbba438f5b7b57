import { mergeConfig } from 'vitest/config';
import { sharedModuleGraph, sharedTestConfig } from '../../vitest.shared.js';

export default mergeConfig(
  sharedTestConfig,
  sharedModuleGraph(['test/query-text.test.ts' /* OpenTelemetry's globals */]),
);
