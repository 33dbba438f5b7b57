import type { Scope } from '../../../foundation/scope.js';
import type { FactStore } from '../../../store/facts/store.js';

/**
 * What the fact block of a user depends on, read from the store in two cheap calls: how many facts there
 * are and the newest-updated one (id, version, times, title, content). Every write changes it — a create
 * or an edit puts its fact first with a new version and time, a delete changes the count, a delete and a
 * create together change the first fact — whichever process made it, since it is read from the store
 * every turn. (A write stamped earlier than the newest fact by a clock running behind would not show until
 * the next write.)
 */
export async function readFactBlockMark(
  store: FactStore,
  scope: Scope,
): Promise<{ count: number; mark: string }> {
  const [count, first] = await Promise.all([
    store.count(scope),
    store.list(scope, { order: 'updated', limit: 1 }),
  ]);
  const head = first[0];
  const mark = JSON.stringify([
    count,
    ...(head ? [head.id, head.version, head.updatedAt, head.createdAt, head.title, head.content] : []),
  ]);
  return { count, mark };
}
