import type { StoreKind } from '../kinds.js';
import {
  type PartitionBackend,
  type PartitionCodec,
  type PartitionRef,
  partitionLabel,
} from './partition.js';

interface Slot {
  ref: PartitionRef;
  state: unknown;
}

/**
 * Keeps partition state in process memory. Mutations are synchronous, so each write is atomic with
 * respect to every other operation in the process without any lock.
 */
export class MemoryPartitionBackend implements PartitionBackend {
  readonly #slots = new Map<string, Slot>();

  async read<S>(ref: PartitionRef, codec: PartitionCodec<S>): Promise<S> {
    const slot = this.#slots.get(partitionLabel(ref));
    return slot ? (slot.state as S) : codec.empty();
  }

  async write<S, R>(ref: PartitionRef, codec: PartitionCodec<S>, mutate: (state: S) => R): Promise<R> {
    const label = partitionLabel(ref);
    const slot = this.#slots.get(label);
    const state = slot ? (slot.state as S) : codec.empty();
    const result = mutate(state);
    if (codec.isEmpty(state)) this.#slots.delete(label);
    else if (!slot) this.#slots.set(label, { ref: { ...ref }, state });
    return result;
  }

  async replace<S>(ref: PartitionRef, codec: PartitionCodec<S>, state: S): Promise<void> {
    const label = partitionLabel(ref);
    if (codec.isEmpty(state)) this.#slots.delete(label);
    else this.#slots.set(label, { ref: { ...ref }, state });
  }

  async list(kind: StoreKind, userId?: string): Promise<PartitionRef[]> {
    const refs: PartitionRef[] = [];
    for (const slot of this.#slots.values()) {
      if (slot.ref.kind === kind && (userId === undefined || slot.ref.userId === userId)) refs.push(slot.ref);
    }
    return refs;
  }
}
