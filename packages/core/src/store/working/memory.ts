import { MemoryPartitionBackend } from '../backend/memory-backend.js';
import { PartitionedWorkingMemoryStore, type WorkingMemoryOptions } from './partitioned.js';

/** Working memory in process memory — the reference implementation. */
export class InMemoryWorkingMemoryStore extends PartitionedWorkingMemoryStore {
  constructor(options: WorkingMemoryOptions = {}) {
    super({ backend: new MemoryPartitionBackend(), ...options });
  }
}
