import { type Scope, ScopeError } from '@kioku/core';
import { AsyncLocalStorageProviderSingleton } from '@langchain/core/singletons';

/** The user: an id, or read from the run's `config.configurable` (`(c) => c.user_id`). */
export type UserOption = string | ((configurable: Record<string, unknown>) => string | undefined);

/** The default user: `config.configurable.user_id`. */
export const userIdFromConfig: UserOption = (configurable) =>
  typeof configurable.user_id === 'string' ? configurable.user_id : undefined;

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
export function userScope(
  user: UserOption,
  agentId: string | undefined,
  configurable: Record<string, unknown> = runConfigurable(),
): Scope {
  const userId = typeof user === 'string' ? user : user(configurable);
  if (typeof userId !== 'string' || userId === '') {
    throw new ScopeError(
      "Kioku has no user for this call: the userId function returned nothing for the run's config.configurable. Pass the user in the run's config (e.g. { configurable: { user_id } }) or, for KiokuStore outside a run, call store.forUser(userId).",
    );
  }
  return agentId === undefined ? { userId } : { userId, agentId };
}
