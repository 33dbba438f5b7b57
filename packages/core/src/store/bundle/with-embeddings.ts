import type { Embedder } from '../embeddings/embedder.js';
import { withDetailEmbeddings } from '../hybrid/details.js';
import { withDocumentEmbeddings } from '../hybrid/documents.js';
import { withFactEmbeddings } from '../hybrid/facts.js';
import type { HybridOptions } from '../hybrid/vector-side.js';
import { InMemoryVectorIndex } from '../vector/memory.js';
import type { VectorIndex } from '../vector/store.js';
import type { KiokuStores } from './bundle.js';

export interface EmbeddingsOptions extends Omit<HybridOptions, 'embedder' | 'index'> {
  embedder: Embedder;
  /**
   * Where the vectors live: this index, else the bundle's `vectors`, else a new in-memory index (empty at
   * every start: rebuild it with `reembed`).
   */
  index?: VectorIndex;
}

/** The embedder each bundle made by `withEmbeddings` searches with. */
const embedderOf = new WeakMap<KiokuStores, Embedder>();

/** The embedder a bundle's hybrid stores use, or undefined when its search is lexical only. */
export function bundleEmbedder(stores: KiokuStores): Embedder | undefined {
  return embedderOf.get(stores);
}

/** A bundle made from `from` by wrapping some of its stores searches with the same embedder. */
export function keepEmbedder(from: KiokuStores, to: KiokuStores): void {
  const embedder = embedderOf.get(from);
  if (embedder) embedderOf.set(to, embedder);
}

/**
 * Hybrid recall for a whole bundle, wired once: facts, documents and details search lexically and by
 * vector (fused by rank), all through one embedder and one index, so every feature that reads them —
 * the fact modes, knowledge, offloaded details — gets the same stores (and the same tools).
 * A bundle that already has embeddings is returned as it is.
 */
export function withEmbeddings(stores: KiokuStores, options: EmbeddingsOptions): KiokuStores {
  if (embedderOf.has(stores)) return stores;
  const index =
    options.index ?? stores.vectors ?? new InMemoryVectorIndex({ dimensions: options.embedder.dimensions });
  const hybrid = { ...options, index };
  const setupIndex = (index as VectorIndex & { setup?: () => Promise<void> }).setup?.bind(index);
  const wrapped: KiokuStores = {
    facts: withFactEmbeddings(stores.facts, hybrid),
    documents: withDocumentEmbeddings(stores.documents, hybrid),
    plans: stores.plans,
    working: stores.working,
    sessions: stores.sessions,
    details: withDetailEmbeddings(stores.details, hybrid),
    vectors: index,
    async setup() {
      const report = await stores.setup();
      await setupIndex?.();
      return report;
    },
    close: () => stores.close(),
  };
  embedderOf.set(wrapped, options.embedder);
  return wrapped;
}
