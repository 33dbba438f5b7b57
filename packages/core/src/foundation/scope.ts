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
  const { userId, agentId, threadId } = (scope ?? {}) as Partial<Record<keyof Scope, unknown>>;
  if (
    typeof userId !== 'string' ||
    (agentId !== undefined && typeof agentId !== 'string') ||
    (threadId !== undefined && typeof threadId !== 'string')
  )
    return parseOrThrow(ScopeSchema, scope, 'scope');
  // Ids cannot hold U+0000, so the key names one scope.
  const key = `${userId}\u0000${agentId ?? '\u0001'}\u0000${threadId ?? '\u0001'}`;
  if (!validScopes.has(key)) {
    const parsed = parseOrThrow(ScopeSchema, scope, 'scope');
    if (validScopes.size >= MAX_VALID_SCOPES) validScopes.clear();
    validScopes.add(key);
    return parsed;
  }
  // What the schema returns for it: the ids given, nothing else.
  const parsed: Scope = { userId };
  if (agentId !== undefined) parsed.agentId = agentId;
  if (threadId !== undefined) parsed.threadId = threadId;
  return parsed;
}

/**
 * Scopes validated before, by value: a store call checks its scope with zod once per scope, not on every
 * call (~3–5 µs of a ~15 µs fact read). Bounded: cleared when full.
 */
const validScopes = new Set<string>();
const MAX_VALID_SCOPES = 10_000;

export function parseThreadScope(scope: unknown): ThreadScope {
  return parseOrThrow(ScopeSchema.required({ threadId: true }), scope, 'scope (threadId is required)');
}

/** Selects what a snapshot contains: one user's data, or everything (an operator's explicit choice). */
export type SnapshotSelector = { userId: string } | { allUsers: true };

export const SnapshotSelectorSchema = z.union([
  z.object({ userId: IdSchema }).strict(),
  z.object({ allUsers: z.literal(true) }).strict(),
]);
