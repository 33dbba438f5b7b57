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
  return parseRemembered(ScopeSchema, scope, 'scope', false);
}

/**
 * `schema`'s parse of `scope`, with zod run once per scope value (see `validScopes`): a later call with
 * the same ids gets what the schema returned then, the ids given and nothing else.
 */
function parseRemembered<S extends Scope>(
  schema: z.ZodType<S>,
  scope: unknown,
  what: string,
  threadRequired: boolean,
): S {
  const { userId, agentId, threadId } = (scope ?? {}) as Partial<Record<keyof Scope, unknown>>;
  if (
    typeof userId !== 'string' ||
    (agentId !== undefined && typeof agentId !== 'string') ||
    (threadId !== undefined && typeof threadId !== 'string') ||
    (threadRequired && threadId === undefined)
  )
    return parseOrThrow(schema, scope, what);
  // Ids cannot hold U+0000, so the key names one scope.
  const key = `${userId}\u0000${agentId ?? '\u0001'}\u0000${threadId ?? '\u0001'}`;
  if (!validScopes.has(key)) {
    const parsed = parseOrThrow(schema, scope, what);
    if (validScopes.size >= MAX_VALID_SCOPES) validScopes.clear();
    validScopes.add(key);
    return parsed;
  }
  const parsed: Scope = { userId };
  if (agentId !== undefined) parsed.agentId = agentId;
  if (threadId !== undefined) parsed.threadId = threadId;
  return parsed as S;
}

/**
 * Scopes validated before, by value: a store call checks its scope with zod once per scope, not on every
 * call (~3–5 µs of a ~15 µs fact read). Bounded: cleared when full.
 */
const validScopes = new Set<string>();
const MAX_VALID_SCOPES = 10_000;

/** Built once: `required()` makes a new schema, which zod compiles again on its first parse. */
const ThreadScopeSchema = ScopeSchema.required({ threadId: true });

export function parseThreadScope(scope: unknown): ThreadScope {
  return parseRemembered(ThreadScopeSchema, scope, 'scope (threadId is required)', true);
}

/** Selects what a snapshot contains: one user's data, or everything (an operator's explicit choice). */
export type SnapshotSelector = { userId: string } | { allUsers: true };

export const SnapshotSelectorSchema = z.union([
  z.object({ userId: IdSchema }).strict(),
  z.object({ allUsers: z.literal(true) }).strict(),
]);
