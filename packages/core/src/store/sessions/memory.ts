import { MemoryPartitionBackend } from '../backend/memory-backend.js';
import { PartitionedSessionStore, type SessionStoreOptions } from './partitioned.js';

/** Sessions in process memory — the reference implementation. */
export class InMemorySessionStore extends PartitionedSessionStore {
  constructor(options: SessionStoreOptions = {}) {
    super({ backend: new MemoryPartitionBackend(), ...options });
  }
}
