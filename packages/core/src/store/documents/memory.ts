import { MemoryPartitionBackend } from '../backend/memory-backend.js';
import { PartitionedDocumentStore, type PartitionedDocumentStoreOptions } from './partitioned.js';

/** Knowledge documents in process memory — the reference implementation. */
export class InMemoryDocumentStore extends PartitionedDocumentStore {
  constructor(options: Omit<PartitionedDocumentStoreOptions, 'backend'> = {}) {
    super({ backend: new MemoryPartitionBackend(), ...options });
  }
}
