import { type Embedder, type Scope, UnsupportedError } from '@kioku/core';
import {
  type ReembedReport,
  reembed,
  type SnapshotSelector,
  type VectorHit,
  type VectorIndex,
  type VectorModelCount,
  type VectorSnapshot,
} from '@kioku/core/store';
import type { Backend } from './backends.js';
import type { VectorKind } from './kinds.js';

export interface VectorKindReport extends ReembedReport {
  kind: VectorKind;
}

/** The store a kind's vectors are made from. */
function storeOf(backend: Backend, kind: VectorKind) {
  return kind === 'transcript' ? backend.stores.sessions : backend.stores[kind];
}

function targetOf(selector: SnapshotSelector): { userId: string } | { allUsers: true } {
  return 'userId' in selector ? { userId: selector.userId } : { allUsers: true };
}

/**
 * Rebuild the vectors of each kind with `embedder`, one kind after another, through core's `reembed()`:
 * per partition (user + agent) the kind's vectors are removed, whatever model made them, then the
 * store's records are embedded and written with the embedder's model id.
 */
export async function reembedKinds(
  backend: Backend,
  index: VectorIndex,
  embedder: Embedder,
  kinds: readonly VectorKind[],
  selector: SnapshotSelector,
  options: { onKind?: (report: VectorKindReport) => void } = {},
): Promise<VectorKindReport[]> {
  const reports: VectorKindReport[] = [];
  for (const kind of kinds) {
    const report = {
      ...(await reembed({ store: storeOf(backend, kind), kind, embedder, index, ...targetOf(selector) })),
      kind,
    };
    reports.push(report);
    options.onKind?.(report);
  }
  return reports;
}

/** A VectorIndex that keeps nothing and notes the partitions a rebuild clears (see `planReembed`). */
class PlanningIndex implements VectorIndex {
  readonly dimensions = 1;
  readonly partitions: Scope[] = [];
  async upsert(): Promise<void> {}
  async search(): Promise<VectorHit[]> {
    return [];
  }
  async delete(): Promise<number> {
    return 0;
  }
  async count(): Promise<number> {
    return 0;
  }
  async models(): Promise<VectorModelCount[]> {
    return [];
  }
  async clear(scope: Scope): Promise<number> {
    this.partitions.push(scope);
    return 0;
  }
  async eraseUser(): Promise<string[]> {
    return [];
  }
  async snapshot(): Promise<VectorSnapshot> {
    throw new UnsupportedError('A planning index has no snapshot.');
  }
  async restore(): Promise<never> {
    throw new UnsupportedError('A planning index cannot be restored.');
  }
}

export interface VectorKindPlan extends VectorKindReport {
  /** The index partitions the rebuild would clear and write. */
  scopes: Scope[];
}

/**
 * What a rebuild would do, with nothing embedded or written: core's `reembed()` runs against an index
 * that keeps nothing and a stand-in embedder of one constant dimension, so the records, vectors and
 * partitions are those of the real run, counted by the same code (`removed` is 0).
 */
export async function planReembed(
  backend: Backend,
  model: string,
  kinds: readonly VectorKind[],
  selector: SnapshotSelector,
): Promise<VectorKindPlan[]> {
  const one = [1];
  const standIn: Embedder = {
    modelId: model,
    dimensions: 1,
    embed: async (texts) => texts.map(() => one),
  };
  const plans: VectorKindPlan[] = [];
  for (const kind of kinds) {
    const index = new PlanningIndex();
    const report = await reembed({
      store: storeOf(backend, kind),
      kind,
      embedder: standIn,
      index,
      ...targetOf(selector),
    });
    plans.push({ ...report, kind, scopes: index.partitions });
  }
  return plans;
}

export interface VectorKindCheck extends VectorKindPlan {
  /** The index's vectors of the kind in those partitions, per model (summed), sorted; `null` = no model. */
  models: VectorModelCount[];
  /** Some of them were made by another model than the embedder's, or carry none: a rebuild is due. */
  mismatch: boolean;
}

/**
 * Which embedding models made the vectors of each kind (`index.models(scope, { kind })` over the
 * partitions a rebuild would visit), next to the embedder's `model`. Reads only.
 */
export async function checkModels(
  backend: Backend,
  index: VectorIndex,
  model: string,
  kinds: readonly VectorKind[],
  selector: SnapshotSelector,
): Promise<VectorKindCheck[]> {
  const checks: VectorKindCheck[] = [];
  for (const plan of await planReembed(backend, model, kinds, selector)) {
    const counts = new Map<string | null, number>();
    for (const scope of plan.scopes) {
      for (const m of await index.models(scope, { kind: plan.kind })) {
        counts.set(m.model, (counts.get(m.model) ?? 0) + m.count);
      }
    }
    const models = [...counts].map(([m, count]) => ({ model: m, count }));
    models.sort((a, b) => (a.model === null ? 1 : b.model === null ? -1 : a.model < b.model ? -1 : 1));
    checks.push({ ...plan, models, mismatch: models.some((m) => m.model !== model) });
  }
  return checks;
}
