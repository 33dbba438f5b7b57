import { z } from 'zod';
import { IdSchema } from './ids.js';
import { parseOrThrow } from './validation.js';

/**
 * Who a read or write belongs to. Every store operation takes one; there is no ambient default.
 * `userId` is mandatory. `agentId` partitions a user's memory per agent when given.
 * `threadId` names a conversation (plans are per thread; details record it).
 */
export const ScopeSchema = z.object({
  userId: IdSchema,
  agentId: IdSchema.optional(),
  threadId: IdSchema.optional(),
});

export type Scope = z.infer<typeof ScopeSchema>;

/** A scope whose thread is required (plans). */
export type ThreadScope = Scope & { threadId: string };

export function parseScope(scope: unknown): Scope {
  return parseOrThrow(ScopeSchema, scope, 'scope');
}

export function parseThreadScope(scope: unknown): ThreadScope {
  return parseOrThrow(ScopeSchema.required({ threadId: true }), scope, 'scope (threadId is required)');
}

/** Selects what a snapshot contains: one user's data, or everything (an operator's explicit choice). */
export type SnapshotSelector = { userId: string } | { allUsers: true };

export const SnapshotSelectorSchema = z.union([
  z.object({ userId: IdSchema }).strict(),
  z.object({ allUsers: z.literal(true) }).strict(),
]);
