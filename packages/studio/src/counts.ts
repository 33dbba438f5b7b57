import { isKiokuSession, type KiokuStores, type Scope, type StoreKind } from './kioku.js';

/** Most details counted one by one; more show as "1000+". */
export const DETAIL_COUNT_LIMIT = 1000;

/**
 * What one user + agent holds, per kind, through the store contracts (no whole-store read): plans are
 * left out (a plan belongs to a thread and no contract lists them), sessions exclude Kioku's own.
 */
export async function partitionCounts(
  stores: KiokuStores,
  scope: Scope,
): Promise<Partial<Record<StoreKind, number>>> {
  const [facts, documents, sessions, working, details] = await Promise.all([
    stores.facts.count(scope),
    stores.documents.list(scope),
    stores.sessions.list(scope),
    stores.working.list(scope),
    stores.details.list({ userId: scope.userId }, { limit: DETAIL_COUNT_LIMIT + 1 }),
  ]);
  return {
    facts,
    documents: documents.length,
    sessions: sessions.filter((s) => !isKiokuSession(s)).length,
    working: working.length,
    details: details.filter((d) => d.agentId === scope.agentId).length,
  };
}
