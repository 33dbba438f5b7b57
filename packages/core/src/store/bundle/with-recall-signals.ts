import { type RecallSignalOptions, withRecallSignals } from '../recall/facts.js';
import type { KiokuStores } from './bundle.js';
import { keepEmbedder } from './with-embeddings.js';

/**
 * The bundle with recall's signals re-ranking its fact search (`RecallFactStore`); every other kind, the
 * vector index, `setup` and `close` are the bundle's own. A bundle that already has embeddings keeps them
 * underneath: the signals then re-rank the fused (lexical + vector) hits.
 */
export function withBundleRecallSignals(stores: KiokuStores, options: RecallSignalOptions = {}): KiokuStores {
  const wrapped: KiokuStores = {
    facts: withRecallSignals(stores.facts, options),
    documents: stores.documents,
    plans: stores.plans,
    working: stores.working,
    sessions: stores.sessions,
    details: stores.details,
    ...(stores.vectors ? { vectors: stores.vectors } : {}),
    setup: () => stores.setup(),
    close: () => stores.close(),
  };
  keepEmbedder(stores, wrapped);
  return wrapped;
}
