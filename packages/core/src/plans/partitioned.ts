import type { PartitionBackend, PartitionCodec, PartitionRef } from '../backend/partition.js';
import { deepFreeze } from '../backend/record-partition.js';
import {
  groupByPartition,
  restorePartitions,
  type SnapshotMapping,
  snapshotPartitions,
} from '../backend/snapshot-io.js';
import { type Clock, isoAt, systemClock } from '../clock.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { shortId } from '../ids.js';
import { parseThreadScope, type SnapshotSelector, type ThreadScope } from '../scope.js';
import type { RestoreOptions, RestoreReport, SnapshotEnvelope } from '../snapshot/envelope.js';
import { withoutUndefined } from '../util/objects.js';
import { parseOrThrow } from '../validation.js';
import {
  ContextNoteSchema,
  type NewStep,
  NewStepSchema,
  PLAN_LIMITS,
  type Plan,
  type PlanInput,
  PlanInputSchema,
  PlanSchema,
  type StepUpdate,
  StepUpdateSchema,
} from './record.js';
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
    const data = parseOrThrow(PlanInputSchema, input, 'plan');
    const now = isoAt(this.#clock);
    const plan: Plan = {
      id: `plan-${shortId()}`,
      userId: s.userId,
      ...(s.agentId === undefined ? {} : { agentId: s.agentId }),
      threadId: s.threadId,
      goal: data.goal,
      steps: data.steps.map((description, i) => ({
        id: String(i + 1),
        description,
        status: 'pending',
        updatedAt: now,
      })),
      contextNotes: [],
      isComplete: false,
      createdAt: now,
      updatedAt: now,
    };
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
    const s = parseThreadScope(scope);
    const changes = parseOrThrow(StepUpdateSchema, update, 'step update');
    const now = isoAt(this.#clock);
    return this.#modify(s, (plan) => {
      const index = plan.steps.findIndex((step) => step.id === stepId);
      if (index < 0) throw new NotFoundError(`Plan has no step "${stepId}".`, { details: { stepId } });
      const steps = [...plan.steps];
      steps[index] = { ...steps[index]!, ...withoutUndefined(changes), updatedAt: now };
      return { ...plan, steps, updatedAt: now };
    });
  }

  async addStep(scope: ThreadScope, step: NewStep): Promise<Plan> {
    const s = parseThreadScope(scope);
    const data = parseOrThrow(NewStepSchema, step, 'step');
    const now = isoAt(this.#clock);
    return this.#modify(s, (plan) => {
      if (plan.steps.length >= PLAN_LIMITS.steps) {
        throw new ValidationError(`A plan holds at most ${PLAN_LIMITS.steps} steps.`);
      }
      const nextId = String(plan.steps.reduce((max, st) => Math.max(max, Number(st.id)), 0) + 1);
      const steps = [...plan.steps];
      const newStep = {
        id: nextId,
        description: data.description,
        status: 'pending' as const,
        updatedAt: now,
      };
      if (data.afterStepId === undefined) steps.push(newStep);
      else {
        const at = steps.findIndex((st) => st.id === data.afterStepId);
        if (at < 0) throw new NotFoundError(`Plan has no step "${data.afterStepId}".`);
        steps.splice(at + 1, 0, newStep);
      }
      return { ...plan, steps, updatedAt: now };
    });
  }

  async addContextNote(scope: ThreadScope, text: string): Promise<Plan> {
    const s = parseThreadScope(scope);
    const now = isoAt(this.#clock);
    const note = parseOrThrow(ContextNoteSchema, { at: now, text }, 'context note');
    return this.#modify(s, (plan) => ({
      ...plan,
      contextNotes: [...plan.contextNotes, note].slice(-PLAN_LIMITS.contextNotes),
      updatedAt: now,
    }));
  }

  async complete(scope: ThreadScope): Promise<Plan> {
    const s = parseThreadScope(scope);
    const now = isoAt(this.#clock);
    return this.#modify(s, (plan) => ({ ...plan, isComplete: true, completedAt: now, updatedAt: now }));
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

  #modify(scope: ThreadScope, change: (plan: Plan) => Plan): Promise<Plan> {
    return this.#backend.write(refFor(scope), planCodec, (slot) => {
      if (!slot.plan) throw new NotFoundError('This conversation has no plan; create one first.');
      slot.plan = deepFreeze(change(slot.plan));
      return slot.plan;
    });
  }
}
