import type { Scope } from '../../../foundation/scope.js';
import type { FactStore } from '../../../store/facts/store.js';

/**
 * What the fact block of a user depends on, read from the store every turn (so a write by another
 * process shows): the store's revision of the user's facts (`FactStore.revision`) and their count.
 * Undefined when the store has no revision: the block is then built every turn.
 */
export async function readFactBlockMark(
  store: FactStore,
  scope: Scope,
): Promise<{ count: number; mark: string } | undefined> {
  if (!store.revision) return undefined;
  const [count, revision] = await Promise.all([store.count(scope), store.revision(scope)]);
  return { count, mark: JSON.stringify([count, revision]) };
}
