import type { Scope } from '../../../foundation/scope.js';
import type { FactStore } from '../../../store/facts/store.js';

/**
 * What the fact block of a user depends on, read from the store every turn (so a write by another
 * process shows): the store's revision of the user's facts (`FactStore.revision`). A revision changes with
 * every write, so it also stands for the fact count the block's ledger reports: one read per turn (on
 * PostgreSQL one round trip), the count only when the block is built. Undefined when the store has no
 * revision: the block is then built every turn.
 */
export async function readFactBlockMark(store: FactStore, scope: Scope): Promise<string | undefined> {
  if (!store.revision) return undefined;
  return store.revision(scope);
}
