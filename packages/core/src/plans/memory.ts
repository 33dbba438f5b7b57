import { MemoryPartitionBackend } from '../backend/memory-backend.js';
import type { Clock } from '../clock.js';
import { PartitionedPlanStore } from './partitioned.js';

/** Plans in process memory — the reference implementation. */
export class InMemoryPlanStore extends PartitionedPlanStore {
  constructor(options: { clock?: Clock } = {}) {
    super({ backend: new MemoryPartitionBackend(), ...options });
  }
}
