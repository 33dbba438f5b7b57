import type { Scope, SnapshotSelector } from '../../foundation/scope.js';
import type { WriteOptions } from '../../foundation/version.js';
import type { ErasureResidue } from '../erasure-residue.js';
import type { RestoreOptions, RestoreReport, SnapshotEnvelope } from '../snapshot/envelope.js';
import type {
  CategoryCount,
  Fact,
  FactFilter,
  FactHit,
  FactInput,
  FactListOptions,
  FactPatch,
  FactQuery,
} from './record.js';
import type { FactStore } from './store.js';

/**
 * A FactStore that hands every call to `store`: the base of wrappers that change a few calls (hybrid
 * recall's vectors, recall's signals) and pass the rest through.
 */
export class DelegatingFactStore implements FactStore {
  readonly store: FactStore;
  /** The wrapped store's, when it has one (every write goes through to it). */
  readonly revision?: (scope: Scope) => Promise<string>;

  constructor(store: FactStore) {
    this.store = store;
    const revision = store.revision;
    if (revision) this.revision = (scope) => revision.call(store, scope);
  }

  get(scope: Scope, id: string): Promise<Fact | null> {
    return this.store.get(scope, id);
  }

  list(scope: Scope, options?: FactListOptions): Promise<Fact[]> {
    return this.store.list(scope, options);
  }

  count(scope: Scope, filter?: FactFilter): Promise<number> {
    return this.store.count(scope, filter);
  }

  create(scope: Scope, input: FactInput): Promise<Fact> {
    return this.store.create(scope, input);
  }

  update(scope: Scope, id: string, patch: FactPatch, options?: WriteOptions): Promise<Fact> {
    return this.store.update(scope, id, patch, options);
  }

  delete(scope: Scope, id: string, options?: WriteOptions): Promise<boolean> {
    return this.store.delete(scope, id, options);
  }

  search(scope: Scope, query: FactQuery): Promise<FactHit[]> {
    return this.store.search(scope, query);
  }

  categories(scope: Scope): Promise<CategoryCount[]> {
    return this.store.categories(scope);
  }

  /** The records only (hybrid wrappers: `forgetUser` erases the user's vectors once, for every kind). */
  eraseUser(userId: string): Promise<string[]> {
    return this.store.eraseUser(userId);
  }

  /** The wrapped store's derived places (the vector index is checked by `verifyErased` itself). */
  erasureResidue(userId: string): Promise<ErasureResidue[]> {
    return this.store.erasureResidue?.(userId) ?? Promise.resolve([]);
  }

  snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<Fact>> {
    return this.store.snapshot(selector);
  }

  restore(snapshot: unknown, options?: RestoreOptions): Promise<RestoreReport> {
    return this.store.restore(snapshot, options);
  }
}
