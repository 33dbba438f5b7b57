import type { PartitionBackend, PartitionCodec, PartitionRef } from '../backend/partition.js';
import { deepFreeze } from '../backend/record-partition.js';
import {
  groupByPartition,
  restorePartitions,
  type SnapshotMapping,
  snapshotPartitions,
} from '../backend/snapshot-io.js';
import { type Clock, isoAt, systemClock } from '../clock.js';
import { parseThreadScope, type SnapshotSelector, type ThreadScope } from '../scope.js';
import type { RestoreOptions, RestoreReport, SnapshotEnvelope } from '../snapshot/envelope.js';
import { missingPlanError, newPlan, type PlanEdit, planEdits } from './edits.js';
import { type NewStep, type Plan, type PlanInput, PlanSchema, type StepUpdate } from './record.js';
import type { PlanStore } from './store.js';

/** A thread's partition holds at most one plan. */
interface PlanSlot {
  plan: Plan | null;
}

const planCodec: PartitionCodec<PlanSlot> = {
  empty: () => ({ plan: null }),
  decode(data) {
    const file = data as { kind?: unknown; schemaVersion?: unknown; plan?: unknown } | null;
    if (file?.kind !== 'plans' || file.schemaVersion !== 1) {
      throw new Error('expected { "kind": "plans", "schemaVersion": 1, "plan": {...} }');
    }
    const parsed = PlanSchema.safeParse(file.plan);
    if (!parsed.success)
      throw new Error(`plan.${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}`);
    return { plan: deepFreeze(parsed.data) };
  },
  encode: (slot) => ({ kind: 'plans', schemaVersion: 1, plan: slot.plan }),
  isEmpty: (slot) => slot.plan === null,
};

function refFor(scope: ThreadScope): PartitionRef {
  return { kind: 'plans', userId: scope.userId, agentId: scope.agentId, name: scope.threadId };
}

const planMapping: SnapshotMapping<Plan, PlanSlot> = {
  kind: 'plans',
  recordSchema: PlanSchema,
  codec: planCodec,
  recordsOf: (slot) => (slot.plan ? [slot.plan] : []),
  userIdOf: (plan) => plan.userId,
  toPartitions: (plans) =>
    groupByPartition(
      plans,
      (p) => refFor(p),
      () => 'plan',
    ).map(({ ref, records }) => ({
      ref,
      state: { plan: deepFreeze(records[0]!) },
    })),
};

/** PlanStore over any PartitionBackend: one partition per user + agent + thread. */
export class PartitionedPlanStore implements PlanStore {
  readonly #backend: PartitionBackend;
  readonly #clock: Clock;

  constructor(options: { backend: PartitionBackend; clock?: Clock }) {
    this.#backend = options.backend;
    this.#clock = options.clock ?? systemClock;
  }

  async create(scope: ThreadScope, input: PlanInput): Promise<Plan> {
    const s = parseThreadScope(scope);
    const plan = newPlan(s, input, isoAt(this.#clock));
    return this.#backend.write(refFor(s), planCodec, (slot) => {
      slot.plan = deepFreeze(plan);
      return slot.plan;
    });
  }

  async get(scope: ThreadScope): Promise<Plan | null> {
    return (await this.#backend.read(refFor(parseThreadScope(scope)), planCodec)).plan;
  }

  async has(scope: ThreadScope): Promise<boolean> {
    return (await this.get(scope)) !== null;
  }

  async updateStep(scope: ThreadScope, stepId: string, update: StepUpdate): Promise<Plan> {
    return this.#modify(parseThreadScope(scope), planEdits.updateStep(stepId, update, isoAt(this.#clock)));
  }

  async addStep(scope: ThreadScope, step: NewStep): Promise<Plan> {
    return this.#modify(parseThreadScope(scope), planEdits.addStep(step, isoAt(this.#clock)));
  }

  async addContextNote(scope: ThreadScope, text: string): Promise<Plan> {
    return this.#modify(parseThreadScope(scope), planEdits.addContextNote(text, isoAt(this.#clock)));
  }

  async complete(scope: ThreadScope): Promise<Plan> {
    return this.#modify(parseThreadScope(scope), planEdits.complete(isoAt(this.#clock)));
  }

  async clear(scope: ThreadScope): Promise<boolean> {
    return this.#backend.write(refFor(parseThreadScope(scope)), planCodec, (slot) => {
      const had = slot.plan !== null;
      slot.plan = null;
      return had;
    });
  }

  snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<Plan>> {
    return snapshotPartitions(this.#backend, planMapping, selector, this.#clock);
  }

  restore(snapshot: unknown, options?: RestoreOptions): Promise<RestoreReport> {
    return restorePartitions(this.#backend, planMapping, snapshot, options);
  }

  #modify(scope: ThreadScope, edit: PlanEdit): Promise<Plan> {
    return this.#backend.write(refFor(scope), planCodec, (slot) => {
      if (!slot.plan) throw missingPlanError();
      slot.plan = deepFreeze(edit(slot.plan));
      return slot.plan;
    });
  }
}
