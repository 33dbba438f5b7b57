import type { KiokuStores } from '../kioku.js';
import { PartitionCounter, pageOf, type UserDirectory } from './directory.js';

/**
 * The users of any stores bundle, read from full snapshots of facts and sessions: for in-memory stores
 * and tests. It reads every record on each call; the native directories do not.
 */
export function snapshotDirectory(stores: KiokuStores): UserDirectory {
  return {
    async list(query) {
      const counter = new PartitionCounter();
      const [facts, sessions] = await Promise.all([
        stores.facts.snapshot({ allUsers: true }),
        stores.sessions.snapshot({ allUsers: true }),
      ]);
      for (const f of facts.records) counter.add(f.userId, f.agentId, 'facts', 1);
      for (const s of sessions.records) counter.add(s.session.userId, s.session.agentId);
      return pageOf(counter.values(), query);
    },
    async close() {},
  };
}
