import type { DetailStore } from '../details/store.js';
import type { DocumentStore } from '../documents/store.js';
import type { FactStore } from '../facts/store.js';
import type { StoreKind } from '../kinds.js';
import type { PlanStore } from '../plans/store.js';
import type { SessionStore } from '../sessions/store.js';
import type { VectorIndex } from '../vector/store.js';
import type { WorkingMemoryStore } from '../working/store.js';

/**
 * Every store an app needs, from one backend (or several, one per kind): what `createJsonStores`,
 * `createSqliteStores`, `createPostgresStores`, `createRedisStores` and `createInMemoryStores` return,
 * and what `KiokuBuilder` takes. Features get their store from here; an app wires nothing per feature.
 */
export interface KiokuStores {
  readonly facts: FactStore;
  readonly documents: DocumentStore;
  readonly plans: PlanStore;
  readonly working: WorkingMemoryStore;
  readonly sessions: SessionStore;
  readonly details: DetailStore;
  /** Where the vectors of hybrid recall live, once embeddings are on (see `withEmbeddings`). */
  readonly vectors?: VectorIndex;
  /**
   * Create or upgrade what the backend needs (tables, migrations, a server check). Safe to call again and
   * from several processes; an adapter may resolve it with a report of what it did.
   */
  setup(): Promise<unknown>;
  /** Release connections and timers. Safe to call again; the stores must not be used afterwards. */
  close(): Promise<void>;
}

/**
 * `fn` run at most once: every call gets the first run's promise. What a bundle's `close` is made of, so
 * closing twice (a shutdown hook and a `finally`) is safe.
 */
export function once(fn: () => Promise<unknown> | unknown): () => Promise<void> {
  let run: Promise<void> | undefined;
  return () => {
    // Started at once (a synchronous close is done when `close()` returns), awaited by every caller.
    run ??= (async () => {
      await fn();
    })();
    return run;
  };
}

/**
 * One bundle of stores taken kind by kind from several (e.g. facts in PostgreSQL, working memory in
 * Redis). `setup` and `close` reach every distinct source bundle once; the vector index comes from
 * `vectors` or, failing that, the facts' bundle.
 */
export function combineStores(
  sources: Readonly<Record<StoreKind, KiokuStores>>,
  vectors?: VectorIndex,
): KiokuStores {
  const distinct = [...new Set(Object.values(sources))];
  const index = vectors ?? sources.facts.vectors;
  return {
    facts: sources.facts.facts,
    documents: sources.documents.documents,
    plans: sources.plans.plans,
    working: sources.working.working,
    sessions: sources.sessions.sessions,
    details: sources.details.details,
    ...(index ? { vectors: index } : {}),
    async setup() {
      for (const bundle of distinct) await bundle.setup();
    },
    close: once(async () => {
      // Close every source even when one fails; report the first failure.
      const results = await Promise.allSettled(distinct.map((bundle) => bundle.close()));
      const failed = results.find((r) => r.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
    }),
  };
}
