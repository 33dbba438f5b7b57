import { type Clock, isoAt, systemClock } from '../../foundation/clock.js';
import { IdSchema } from '../../foundation/ids.js';
import { parseScope, type Scope } from '../../foundation/scope.js';
import { parseOrThrow } from '../../foundation/validation.js';
import type { KiokuStores } from '../../store/bundle/bundle.js';
import type { Fact } from '../../store/facts/record.js';
import { ChangesetLog } from '../changesets/changeset-log.js';
import { SuppressionList } from '../trust/suppression.js';

/** What a cascade removed, by kind (ids). */
export interface CascadeResult {
  facts: string[];
  sessions: string[];
  plans: string[];
  details: string[];
}

/**
 * Forget one fact and everything derived from it through provenance: the facts that name it in
 * `provenance.sourceIds` (an enrichment of it, a consolidation that merged it), and theirs in turn. Their
 * vectors go with them (the hybrid fact store deletes a fact's vector with the fact). Same user and agent.
 */
export async function forgetFact(
  stores: KiokuStores,
  scope: Scope,
  factId: string,
  options: {
    clock?: Clock;
    /** Put the content on the user's suppression list (default true; `forgetSession` passes false). */
    suppress?: boolean;
  } = {},
): Promise<CascadeResult> {
  const s = parseScope(scope);
  parseOrThrow(IdSchema, factId, 'fact id');
  const facts = await factsOf(stores, s);
  const removed: string[] = [];
  const queue = [factId];
  const seen = new Set(queue);
  while (queue.length > 0) {
    const id = queue.shift()!;
    if (await stores.facts.delete(s, id)) removed.push(id);
    for (const fact of facts) {
      if (!seen.has(fact.id) && fact.provenance.sourceIds?.includes(id)) {
        seen.add(fact.id);
        queue.push(fact.id);
      }
    }
  }
  // No copy left and nothing re-learnt: the kept changesets lose the text (tombstones), and the content
  // goes on the user's suppression list (a keyed hash) that extraction consults.
  const gone = facts.filter((f) => removed.includes(f.id));
  const at = isoAt(options.clock ?? systemClock);
  await new ChangesetLog(stores.sessions).forgetFacts(s, gone, at);
  if (options.suppress === false) return { facts: removed, sessions: [], plans: [], details: [] };
  await new SuppressionList(stores.sessions).add(
    s.userId,
    gone.map((f) => f.content),
    at,
  );
  return { facts: removed, sessions: [], plans: [], details: [] };
}

/**
 * Forget one session: its transcript and k-v map (with the session), its thread's plan, the details
 * offloaded in it (`threadId` = the session), the facts extracted from it (`provenance.sessionId`) and
 * what derives from those. Vectors go with their records (hybrid stores).
 */
export async function forgetSession(
  stores: KiokuStores,
  scope: Scope,
  sessionId: string,
): Promise<CascadeResult> {
  const s = parseScope(scope);
  parseOrThrow(IdSchema, sessionId, 'session id');
  const result: CascadeResult = { facts: [], sessions: [], plans: [], details: [] };
  // Dependants first, the session last: a crash half-way leaves the session to find them by again.
  const details = (await stores.details.snapshot({ userId: s.userId })).records.filter(
    (d) => d.threadId === sessionId && d.agentId === s.agentId,
  );
  for (const detail of details) if (await stores.details.delete(s, detail.id)) result.details.push(detail.id);
  for (const fact of await factsOf(stores, s)) {
    if (fact.provenance.sessionId !== sessionId) continue;
    // The session goes with its transcript: nothing to re-extract them from, so nothing to suppress.
    result.facts.push(...(await forgetFact(stores, s, fact.id, { suppress: false })).facts);
  }
  if (await stores.plans.delete({ ...s, threadId: sessionId })) result.plans.push(sessionId);
  if (await stores.sessions.delete(s, sessionId)) result.sessions.push(sessionId);
  return result;
}

/** Every fact of the scope's user and agent, without a page limit. */
async function factsOf(stores: KiokuStores, scope: Scope): Promise<Fact[]> {
  return (await stores.facts.snapshot({ userId: scope.userId })).records.filter(
    (f) => f.agentId === scope.agentId,
  );
}
