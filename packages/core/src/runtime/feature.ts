import type { Scope } from '../foundation/scope.js';
import type { ToolResult } from '../model/execute-tool.js';
import type { Toolkit } from '../model/tool.js';
import type { PromptMiddleware } from './middleware.js';

/** Rewrites a tool's output before it enters the conversation (two-layer offload replaces big outputs). */
export interface ToolOutputProcessor {
  readonly name: string;
  process(result: ToolResult, context: { scope: Readonly<Scope>; arguments: string }): Promise<ToolResult>;
}

/**
 * A memory feature as the builder wires it (`withFacts()`, `withPlanMode()` …): a prompt middleware,
 * a toolkit for the model, a tool-output processor — any of them optional.
 */
export interface MemoryFeature {
  readonly name: string;
  readonly middleware?: PromptMiddleware;
  readonly toolkit?: Toolkit;
  readonly toolOutput?: ToolOutputProcessor;
  /**
   * The feature's background work reads the conversation's turns from the transcript (extraction): every
   * turn is then appended with its session marked pending (`SessionStore.transcriptAppend`'s `pending`), in
   * the same atomic step, so workers in any process find it.
   */
  readonly outbox?: boolean;
}
