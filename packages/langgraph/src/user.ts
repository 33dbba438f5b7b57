import { type Scope, ScopeError } from '@kioku/core';
import { AsyncLocalStorageProviderSingleton } from '@langchain/core/singletons';

/** The user: an id, or read from the run's `config.configurable` (`(c) => c.user_id`). */
export type UserOption = string | ((configurable: Record<string, unknown>) => string | undefined);

/** The `configurable` of the LangGraph run this call is part of (empty outside a run). */
export function runConfigurable(): Record<string, unknown> {
  const config = AsyncLocalStorageProviderSingleton.getRunnableConfig() as
    | { configurable?: Record<string, unknown> }
    | undefined;
  return config?.configurable ?? {};
}

/**
 * The Kioku scope of a call: the user named by the app (never by a model), and the agent when the memory
 * is partitioned per agent. ScopeError when the run's config names no user.
 */
export function userScope(user: UserOption, agentId: string | undefined): Scope {
  const userId = typeof user === 'string' ? user : user(runConfigurable());
  if (typeof userId !== 'string' || userId === '') {
    throw new ScopeError(
      "KiokuStore has no user for this call: the userId function returned nothing for the run's config.configurable. Pass the user in the run's config (e.g. { configurable: { user_id } }) or call store.forUser(userId) outside a run.",
    );
  }
  return agentId === undefined ? { userId } : { userId, agentId };
}
