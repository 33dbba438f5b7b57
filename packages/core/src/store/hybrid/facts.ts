import { categoryMatches, hasAllTags } from '../../foundation/record-fields.js';
import { parseScope, type Scope } from '../../foundation/scope.js';
import { parseOrThrow } from '../../foundation/validation.js';
import type { WriteOptions } from '../../foundation/version.js';
import { DelegatingFactStore } from '../facts/delegating.js';
import type { Fact, FactHit, FactInput, FactPatch, FactQuery } from '../facts/record.js';
import { FactQuerySchema } from '../facts/record.js';
import type { FactStore } from '../facts/store.js';
import type { RestoreOptions, RestoreReport, SnapshotEnvelope } from '../snapshot/envelope.js';
import { reciprocalRankFusion } from './fusion.js';
import { factMapping, factVectorId } from './kinds.js';
import { type ReindexReport, reindexRecords } from './reindex.js';
import { type HybridOptions, VectorSide } from './vector-side.js';

const indexScope = (scope: Scope): Scope =>
  scope.agentId === undefined ? { userId: scope.userId } : { userId: scope.userId, agentId: scope.agentId };

/**
 * A FactStore that keeps a vector per fact in sync (create, update, delete, restore) and answers
 * `search` with hybrid recall: the store's lexical results and the vector index's nearest facts, fused
 * by reciprocal rank (`score` is the RRF score). Searches without query text are the store's own
 * (newest first). Everything else is the wrapped store's.
 *
 * The store is the source of truth: a vector is written after its fact, so when embedding or the index
 * fails the call rejects with the fact already saved (lexical search finds it; the next update or
 * `reembed()` adds the vector). Vector hits are always read back from the store, and vectors whose fact
 * is gone are dropped from the index as they are found.
 */
export class HybridFactStore extends DelegatingFactStore {
  readonly vectors: VectorSide;

  constructor(
    store: FactStore,
    options: HybridOptions & { embedder: NonNullable<HybridOptions['embedder']> },
  ) {
    super(store);
    this.vectors = new VectorSide('facts', options.embedder, options);
  }

  override async create(scope: Scope, input: FactInput): Promise<Fact> {
    const s = indexScope(parseScope(scope));
    await this.vectors.ensureModel(s);
    const fact = await this.store.create(scope, input);
    await this.vectors.write(s, factMapping.entriesOf(fact));
    return fact;
  }

  override async update(scope: Scope, id: string, patch: FactPatch, options?: WriteOptions): Promise<Fact> {
    const s = indexScope(parseScope(scope));
    await this.vectors.ensureModel(s);
    const fact = await this.store.update(scope, id, patch, options);
    await this.vectors.write(s, factMapping.entriesOf(fact));
    return fact;
  }

  override async delete(scope: Scope, id: string, options?: WriteOptions): Promise<boolean> {
    const deleted = await this.store.delete(scope, id, options);
    // Also when nothing was deleted: a vector left behind by an earlier failure goes too.
    await this.vectors.remove(indexScope(parseScope(scope)), [factVectorId(id)]);
    return deleted;
  }

  override async search(scope: Scope, query: FactQuery): Promise<FactHit[]> {
    const s = parseScope(scope);
    const q = parseOrThrow(FactQuerySchema, query, 'fact query');
    const text = q.query?.trim();
    if (!text) return this.store.search(scope, query);
    const pool = this.vectors.candidates(q.limit);
    const [lexical, nearest] = await Promise.all([
      this.store.search(scope, { ...q, limit: pool }),
      this.vectors.search(indexScope(s), text, pool),
    ]);
    const known = new Map<string, Fact | null>(lexical.map((hit) => [hit.fact.id, hit.fact]));
    const idOf = (payload: Record<string, unknown>) =>
      typeof payload.id === 'string' ? payload.id : undefined;
    const missing = [...new Set(nearest.map((hit) => idOf(hit.payload)))].filter(
      (id): id is string => id !== undefined && !known.has(id),
    );
    for (const [i, fact] of (await Promise.all(missing.map((id) => this.store.get(scope, id)))).entries()) {
      known.set(missing[i]!, fact);
    }
    const vectorFacts: Fact[] = [];
    const gone: string[] = [];
    for (const hit of nearest) {
      const id = idOf(hit.payload);
      const fact = id === undefined ? null : (known.get(id) ?? null);
      if (!fact) {
        gone.push(hit.id);
        continue;
      }
      if (q.category && !categoryMatches(fact.category, q.category)) continue;
      if (!hasAllTags(fact.tags, q.tags)) continue;
      vectorFacts.push(fact);
    }
    await this.vectors.forget(indexScope(s), gone);
    return reciprocalRankFusion(
      [
        lexical.map((hit) => ({ key: hit.fact.id, item: hit.fact })),
        vectorFacts.map((fact) => ({ key: fact.id, item: fact })),
      ],
      this.vectors.fusion,
    )
      .slice(0, q.limit)
      .map(({ item, score }) => ({ fact: item, score }));
  }

  /** Restores the store, then rebuilds the vectors of every partition the snapshot contains. */
  override async restore(snapshot: unknown, options?: RestoreOptions): Promise<RestoreReport> {
    const report = await this.store.restore(snapshot, options);
    await reindexRecords(this.vectors, factMapping, (snapshot as SnapshotEnvelope<Fact>).records);
    return report;
  }

  /** Rebuild the vectors of these facts' partitions with the configured embedder (see `reembed`). */
  reindex(facts: readonly Fact[], options?: { signal?: AbortSignal }): Promise<ReindexReport> {
    return reindexRecords(this.vectors, factMapping, facts, options);
  }
}

/**
 * Hybrid recall for facts: with an embedder, a {@link HybridFactStore} over `store`; without one,
 * `store` itself (lexical search alone).
 */
export function withFactEmbeddings(store: FactStore, options: HybridOptions): FactStore {
  const { embedder } = options;
  return embedder ? new HybridFactStore(store, { ...options, embedder }) : store;
}
