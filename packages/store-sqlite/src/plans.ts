import {
  ContextNoteSchema,
  isoAt,
  type NewStep,
  NewStepSchema,
  NotFoundError,
  PLAN_LIMITS,
  type Plan,
  type PlanInput,
  PlanInputSchema,
  PlanSchema,
  type PlanStep,
  type PlanStore,
  parseOrThrow,
  parseThreadScope,
  type RestoreOptions,
  type RestoreReport,
  type SnapshotEnvelope,
  type SnapshotSelector,
  type StepUpdate,
  StepUpdateSchema,
  shortId,
  type ThreadScope,
  ValidationError,
} from '@kioku/core';
import { and, asc, eq, type SQL } from 'drizzle-orm';
import { agentColumn, agentOf, SqliteStoreBase } from './base.js';
import { plans } from './schema.js';

type PlanRow = typeof plans.$inferSelect;

function toPlan(row: PlanRow): Plan {
  const plan: Plan = {
    id: row.id,
    userId: row.userId,
    threadId: row.threadId,
    goal: row.goal,
    steps: row.steps as Plan['steps'],
    contextNotes: row.contextNotes as Plan['contextNotes'],
    isComplete: row.isComplete,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
  const agentId = agentOf(row.agentId);
  if (agentId !== undefined) plan.agentId = agentId;
  if (row.completedAt !== null) plan.completedAt = row.completedAt;
  return plan;
}

function toRow(plan: Plan) {
  return {
    userId: plan.userId,
    agentId: agentColumn(plan.agentId),
    threadId: plan.threadId,
    id: plan.id,
    goal: plan.goal,
    steps: plan.steps,
    contextNotes: plan.contextNotes,
    isComplete: plan.isComplete,
    createdAt: plan.createdAt,
    updatedAt: plan.updatedAt,
    completedAt: plan.completedAt ?? null,
  };
}

const ofThread = (scope: ThreadScope): SQL =>
  and(
    eq(plans.userId, scope.userId),
    eq(plans.agentId, agentColumn(scope.agentId)),
    eq(plans.threadId, scope.threadId),
  )!;

/** Plans in `kioku_plans`: one row per user + agent + thread; steps and context notes as JSON lists. */
export class SqlitePlanStore extends SqliteStoreBase implements PlanStore {
  async create(scope: ThreadScope, input: PlanInput): Promise<Plan> {
    const s = parseThreadScope(scope);
    const data = parseOrThrow(PlanInputSchema, input, 'plan');
    const now = isoAt(this.clock);
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
    this.write(() => {
      this.orm.delete(plans).where(ofThread(s)).run();
      this.orm.insert(plans).values(toRow(plan)).run();
    });
    return plan;
  }

  async get(scope: ThreadScope): Promise<Plan | null> {
    const s = parseThreadScope(scope);
    const row = this.read(() => this.orm.select().from(plans).where(ofThread(s)).get());
    return row ? toPlan(row) : null;
  }

  async has(scope: ThreadScope): Promise<boolean> {
    return (await this.get(scope)) !== null;
  }

  async updateStep(scope: ThreadScope, stepId: string, update: StepUpdate): Promise<Plan> {
    const s = parseThreadScope(scope);
    const changes = parseOrThrow(StepUpdateSchema, update, 'step update');
    const now = isoAt(this.clock);
    return this.#modify(s, (plan) => {
      const index = plan.steps.findIndex((step) => step.id === stepId);
      if (index < 0) throw new NotFoundError(`Plan has no step "${stepId}".`, { details: { stepId } });
      const steps = [...plan.steps];
      const step: PlanStep = { ...steps[index]!, updatedAt: now };
      if (changes.status !== undefined) step.status = changes.status;
      if (changes.notes !== undefined) step.notes = changes.notes;
      steps[index] = step;
      return { ...plan, steps, updatedAt: now };
    });
  }

  async addStep(scope: ThreadScope, step: NewStep): Promise<Plan> {
    const s = parseThreadScope(scope);
    const data = parseOrThrow(NewStepSchema, step, 'step');
    const now = isoAt(this.clock);
    return this.#modify(s, (plan) => {
      if (plan.steps.length >= PLAN_LIMITS.steps) {
        throw new ValidationError(`A plan holds at most ${PLAN_LIMITS.steps} steps.`);
      }
      const nextId = String(plan.steps.reduce((max, st) => Math.max(max, Number(st.id)), 0) + 1);
      const steps = [...plan.steps];
      const newStep: PlanStep = {
        id: nextId,
        description: data.description,
        status: 'pending',
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
    const now = isoAt(this.clock);
    const note = parseOrThrow(ContextNoteSchema, { at: now, text }, 'context note');
    return this.#modify(s, (plan) => ({
      ...plan,
      contextNotes: [...plan.contextNotes, note].slice(-PLAN_LIMITS.contextNotes),
      updatedAt: now,
    }));
  }

  async complete(scope: ThreadScope): Promise<Plan> {
    const s = parseThreadScope(scope);
    const now = isoAt(this.clock);
    return this.#modify(s, (plan) => ({ ...plan, isComplete: true, completedAt: now, updatedAt: now }));
  }

  async clear(scope: ThreadScope): Promise<boolean> {
    const s = parseThreadScope(scope);
    return this.write(() => this.orm.delete(plans).where(ofThread(s)).run().changes > 0);
  }

  async snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<Plan>> {
    return this.snapshotOf('plans', selector, (userId) =>
      this.orm
        .select()
        .from(plans)
        .where(userId === undefined ? undefined : eq(plans.userId, userId))
        .orderBy(asc(plans.userId), asc(plans.agentId), asc(plans.threadId))
        .all()
        .map(toPlan),
    );
  }

  async restore(snapshot: unknown, options: RestoreOptions = {}): Promise<RestoreReport> {
    return this.restoreFrom('plans', PlanSchema, snapshot, options, {
      userIdOf: (p) => p.userId,
      partitionOf: (p) => `${p.userId}/${agentColumn(p.agentId)}/${p.threadId}`,
      // A thread holds one plan: two plans of one thread are a duplicate, whatever their ids.
      idOf: () => 'plan',
      replace: ([plan]) => {
        this.orm.delete(plans).where(ofThread(plan!)).run();
        this.orm.insert(plans).values(toRow(plan!)).run();
      },
    });
  }

  /** Read-modify-write of the thread's plan in one transaction. */
  #modify(scope: ThreadScope, change: (plan: Plan) => Plan): Plan {
    return this.write(() => {
      const row = this.orm.select().from(plans).where(ofThread(scope)).get();
      if (!row) throw new NotFoundError('This conversation has no plan; create one first.');
      const next = change(toPlan(row));
      this.orm.update(plans).set(toRow(next)).where(eq(plans.seq, row.seq)).run();
      return next;
    });
  }
}
