import type { Clock } from '../../foundation/clock.js';
import { MemoryPartitionBackend } from '../backend/memory-backend.js';
import { PartitionedPlanStore } from './partitioned.js';

/** Plans in process memory — the reference implementation. */
export class InMemoryPlanStore extends PartitionedPlanStore {
  constructor(options: { clock?: Clock } = {}) {
    super({ backend: new MemoryPartitionBackend(), ...options });
  }
}
