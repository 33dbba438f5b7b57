import {
  type CascadeResult,
  createInMemoryStores,
  forgetFact,
  forgetSession,
  type KiokuStores,
  NotFoundError,
  type Scope,
  SNAPSHOT_FORMAT,
  SNAPSHOT_SCHEMA_VERSION,
} from './kioku.js';

/**
 * What forgetting a fact or a session would remove, without removing anything: core's own cascade
 * (`forgetFact` / `forgetSession`) run on an in-memory copy of what it reads — the user's facts, and for a
 * session its plans, offloaded details and the session itself. The same rule decides both, so the dry run
 * names exactly the ids the real run removes (unless memory changes in between).
 */
export async function previewCascade(
  stores: KiokuStores,
  scope: Scope,
  what: 'fact' | 'session',
  target: string,
): Promise<CascadeResult> {
  const user = { userId: scope.userId };
  const copy = createInMemoryStores();
  await copy.facts.restore(await stores.facts.snapshot(user), user);
  if (what === 'fact') return forgetFact(copy, scope, target);
  const session = await stores.sessions.get(scope, target);
  if (!session) throw new NotFoundError(`No session ${target} for ${scope.userId}.`);
  await Promise.all([
    copy.details.restore(await stores.details.snapshot(user), user),
    copy.plans.restore(await stores.plans.snapshot(user), user),
    // The session alone, without its transcript and k-v map: the cascade only deletes it.
    copy.sessions.restore(
      {
        format: SNAPSHOT_FORMAT,
        schemaVersion: SNAPSHOT_SCHEMA_VERSION,
        kind: 'sessions',
        createdAt: new Date().toISOString(),
        selector: user,
        records: [{ session, kv: [], transcript: [] }],
      },
      user,
    ),
  ]);
  return forgetSession(copy, scope, target);
}
