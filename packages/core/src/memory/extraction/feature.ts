import type { MemoryFeature } from '../../runtime/feature.js';
import { EMPTY_RESULT, type PromptMiddleware } from '../../runtime/middleware.js';
import type { BackgroundQueue } from '../background/queue.js';
import { type ExtractOptions, extractAndStoreFacts } from './extract.js';

export const EXTRACTION_MIDDLEWARE = 'extraction';

export interface ExtractionFeatureOptions
  extends Omit<ExtractOptions, 'scope' | 'sessionId' | 'turn' | 'messages' | 'signal'> {
  /** Where each turn's extraction runs, after the reply (KiokuBuilder hands its queue). */
  background: BackgroundQueue;
}

/**
 * Extraction after every turn: once the turn is recorded, a job on the background queue extracts the
 * exchange's durable facts (`extractAndStoreFacts`: the user message and the final answer only, never
 * memory blocks, tool results or the system prompt), reconciles them with the user's similar facts and
 * applies the changeset (or, with `apply: false`, reports it for review in the queue's `done` event).
 * The reply never waits for it; a failure is reported by the queue and changes nothing.
 */
export function extraction(options: ExtractionFeatureOptions): MemoryFeature {
  const { background, ...extract } = options;
  const middleware: PromptMiddleware = {
    name: EXTRACTION_MIDDLEWARE,
    placement: 'system',
    async inject() {
      return EMPTY_RESULT;
    },
    async afterTurn(ctx) {
      const scope = {
        userId: ctx.scope.userId,
        ...(ctx.scope.agentId !== undefined ? { agentId: ctx.scope.agentId } : {}),
      };
      const messages = ctx.messages.map((m) => ({ ...m }));
      background.enqueue({
        kind: 'extraction',
        scope,
        run: (signal) =>
          extractAndStoreFacts({
            ...extract,
            scope,
            sessionId: ctx.sessionId,
            turn: ctx.turnIndex,
            messages,
            signal,
          }),
      });
    },
  };
  return { name: EXTRACTION_MIDDLEWARE, middleware };
}
