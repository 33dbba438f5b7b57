import type { Clock } from '../../foundation/clock.js';
import type { Tokenizer } from '../../tokens/tokenizer.js';
import { MemoryPartitionBackend } from '../backend/memory-backend.js';
import { PartitionedDetailStore } from './partitioned.js';

/** Details in process memory — the reference implementation. */
export class InMemoryDetailStore extends PartitionedDetailStore {
  constructor(options: { clock?: Clock; tokenizer?: Tokenizer } = {}) {
    super({ backend: new MemoryPartitionBackend(), ...options });
  }
}
