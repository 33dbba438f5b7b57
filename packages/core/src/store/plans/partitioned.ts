import { type Clock, isoAt, systemClock } from '../../foundation/clock.js';
import { parseThreadScope, type SnapshotSelector, type ThreadScope } from '../../foundation/scope.js';
import { parseWriteOptions, type WriteOptions } from '../../foundation/version.js';
import type { PartitionBackend, PartitionCodec, PartitionRef } from '../backend/partition.js';
import { deepFreeze } from '../backend/record-partition.js';
import {
  erasePartitions,
  groupByPartition,
  restorePartitions,
  type SnapshotMapping,
  snapshotPartitions,
} from '../backend/snapshot-io.js';
import type { RestoreOptions, RestoreReport, SnapshotEnvelope } from '../snapshot/envelope.js';
import { withPlanEdits } from './derived.js';
import { checkPlanVersion, missingPlanError, newPlan, type PlanEdit } from './edits.js';
import { type Plan, type PlanInput, PlanSchema } from './record.js';
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
export class PartitionedPlanStore extends withPlanEdits(Object) implements PlanStore {
  readonly #backend: PartitionBackend;
  readonly #clock: Clock;

  constructor(options: { backend: PartitionBackend; clock?: Clock }) {
    super();
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

  override async get(scope: ThreadScope): Promise<Plan | null> {
    return (await this.#backend.read(refFor(parseThreadScope(scope)), planCodec)).plan;
  }

  async delete(scope: ThreadScope, options?: WriteOptions): Promise<boolean> {
    const s = parseThreadScope(scope);
    const { expectedVersion } = parseWriteOptions(options);
    return this.#backend.write(refFor(s), planCodec, (slot) => {
      if (slot.plan === null) return false;
      checkPlanVersion(slot.plan, expectedVersion);
      slot.plan = null;
      return true;
    });
  }

  snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<Plan>> {
    return snapshotPartitions(this.#backend, planMapping, selector, this.#clock);
  }

  eraseUser(userId: string): Promise<string[]> {
    return erasePartitions(this.#backend, planMapping, userId, (p) => p.id);
  }

  restore(snapshot: unknown, options?: RestoreOptions): Promise<RestoreReport> {
    return restorePartitions(this.#backend, planMapping, snapshot, options);
  }

  override modify(scope: ThreadScope, make: (now: string) => PlanEdit): Promise<Plan> {
    const edit = make(isoAt(this.#clock));
    return this.#backend.write(refFor(scope), planCodec, (slot) => {
      if (!slot.plan) throw missingPlanError();
      slot.plan = deepFreeze(edit(slot.plan));
      return slot.plan;
    });
  }
}
