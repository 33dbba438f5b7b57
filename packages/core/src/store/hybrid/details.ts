import { parseScope, type Scope, type SnapshotSelector } from '../../foundation/scope.js';
import { parseOrThrow } from '../../foundation/validation.js';
import type {
  DetailHit,
  DetailInput,
  DetailListOptions,
  DetailQuery,
  DetailRecord,
} from '../details/record.js';
import { DetailQuerySchema } from '../details/record.js';
import type { DetailStore } from '../details/store.js';
import type { ErasureResidue } from '../erasure-residue.js';
import type { RestoreOptions, RestoreReport, SnapshotEnvelope } from '../snapshot/envelope.js';
import { reciprocalRankFusion } from './fusion.js';
import { detailMapping, detailVectorId } from './kinds.js';
import { type ReindexReport, reindexRecords } from './reindex.js';
import { filterOf, type HybridOptions, VectorSide } from './vector-side.js';

/** Details belong to the user alone (agent and thread are recorded, and filtered on). */
const indexScope = (scope: Scope): Scope => ({ userId: scope.userId });

/**
 * A DetailStore with a vector per active record (written on create, removed on deactivate, rebuilt on
 * restore) whose `search` fuses lexical and vector hits (reciprocal rank fusion). The type, agent and
 * thread filters apply to both sides (the vector side filters on payload fields). Deactivated records
 * have no vector: a search with `includeInactive` finds them lexically only.
 */
export class HybridDetailStore implements DetailStore {
  readonly store: DetailStore;
  readonly vectors: VectorSide;

  constructor(
    store: DetailStore,
    options: HybridOptions & { embedder: NonNullable<HybridOptions['embedder']> },
  ) {
    this.store = store;
    this.vectors = new VectorSide('details', options.embedder, options);
  }

  get(scope: Scope, id: string, options?: { includeInactive?: boolean }): Promise<DetailRecord | null> {
    return this.store.get(scope, id, options);
  }

  list(scope: Scope, options?: DetailListOptions): Promise<DetailRecord[]> {
    return this.store.list(scope, options);
  }

  snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<DetailRecord>> {
    return this.store.snapshot(selector);
  }

  async create(scope: Scope, input: DetailInput): Promise<DetailRecord> {
    const s = indexScope(parseScope(scope));
    await this.vectors.ensureModel(s);
    const record = await this.store.create(scope, input);
    await this.vectors.write(s, detailMapping.entriesOf(record));
    return record;
  }

  async deactivate(scope: Scope, id: string): Promise<boolean> {
    const changed = await this.store.deactivate(scope, id);
    await this.vectors.remove(indexScope(parseScope(scope)), [detailVectorId(id)]);
    return changed;
  }

  async delete(scope: Scope, id: string): Promise<boolean> {
    const deleted = await this.store.delete(scope, id);
    await this.vectors.remove(indexScope(parseScope(scope)), [detailVectorId(id)]);
    return deleted;
  }

  /** The records only: `forgetUser` erases the user's vectors from the index once, for every kind. */
  eraseUser(userId: string): Promise<string[]> {
    return this.store.eraseUser(userId);
  }

  /** The wrapped store's derived places (the vector index is checked by `verifyErased` itself). */
  erasureResidue(userId: string): Promise<ErasureResidue[]> {
    return this.store.erasureResidue?.(userId) ?? Promise.resolve([]);
  }

  async search(scope: Scope, query: DetailQuery): Promise<DetailHit[]> {
    const s = parseScope(scope);
    const q = parseOrThrow(DetailQuerySchema, query, 'detail query');
    const pool = this.vectors.candidates(q.limit);
    const filter = filterOf({ type: q.type, agentId: q.agentId, threadId: q.threadId });
    const [lexical, nearest] = await Promise.all([
      this.store.search(scope, { ...q, limit: pool }),
      this.vectors.search(indexScope(s), q.query, pool, filter),
    ]);
    const known = new Map<string, DetailRecord | null>(lexical.map((hit) => [hit.detail.id, hit.detail]));
    const idOf = (payload: Record<string, unknown>) =>
      typeof payload.id === 'string' ? payload.id : undefined;
    const missing = [...new Set(nearest.map((hit) => idOf(hit.payload)))].filter(
      (id): id is string => id !== undefined && !known.has(id),
    );
    const fetched = await Promise.all(
      missing.map((id) => this.store.get(scope, id, { includeInactive: true })),
    );
    for (const [i, detail] of fetched.entries()) known.set(missing[i]!, detail);
    const vectorHits: DetailHit[] = [];
    const gone: string[] = [];
    for (const hit of nearest) {
      const id = idOf(hit.payload);
      const detail = id === undefined ? null : (known.get(id) ?? null);
      // Gone, or deactivated behind this wrapper's back: such vectors should not exist.
      if (!detail?.active) {
        gone.push(hit.id);
        continue;
      }
      vectorHits.push({ detail, score: hit.score });
    }
    await this.vectors.forget(indexScope(s), gone);
    const ranked = (hits: DetailHit[]) => hits.map((hit) => ({ key: hit.detail.id, item: hit.detail }));
    return reciprocalRankFusion([ranked(lexical), ranked(vectorHits)], this.vectors.fusion)
      .slice(0, q.limit)
      .map(({ item, score }) => ({ detail: item, score }));
  }

  async restore(snapshot: unknown, options?: RestoreOptions): Promise<RestoreReport> {
    const report = await this.store.restore(snapshot, options);
    await reindexRecords(this.vectors, detailMapping, (snapshot as SnapshotEnvelope<DetailRecord>).records);
    return report;
  }

  reindex(records: readonly DetailRecord[], options?: { signal?: AbortSignal }): Promise<ReindexReport> {
    return reindexRecords(this.vectors, detailMapping, records, options);
  }
}

/** Hybrid detail search: a {@link HybridDetailStore} with an embedder, `store` itself without one. */
export function withDetailEmbeddings(store: DetailStore, options: HybridOptions): DetailStore {
  const { embedder } = options;
  return embedder ? new HybridDetailStore(store, { ...options, embedder }) : store;
}
