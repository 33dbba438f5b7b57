import { MemoryPartitionBackend } from '../backend/memory-backend.js';
import { PartitionedFactStore, type PartitionedStoreOptions } from './partitioned.js';

/** Facts in process memory — the reference implementation, for tests and single-process apps. */
export class InMemoryFactStore extends PartitionedFactStore {
  constructor(options: Omit<PartitionedStoreOptions, 'backend'> = {}) {
    super({ backend: new MemoryPartitionBackend(), ...options });
  }
}
