import { mergeConfig } from 'vitest/config';
import { sharedModuleGraph, sharedTestConfig } from '../../vitest.shared.js';

export default mergeConfig(
  sharedTestConfig,
  sharedModuleGraph(['test/telemetry.test.ts' /* OpenTelemetry's globals */]),
);
