import type { Plan } from '@kioku/core';
import {
  checkPlanVersion,
  isoAt,
  missingPlanError,
  newPlan,
  type PlanEdit,
  parseThreadScope,
  parseWriteOptions,
  withPlanEdits,
} from '@kioku/core/adapter';
import {
  type PlanInput,
  PlanSchema,
  type PlanStore,
  type RestoreOptions,
  type RestoreReport,
  type SnapshotEnvelope,
  type SnapshotSelector,
  type ThreadScope,
  type WriteOptions,
} from '@kioku/core/store';
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
    version: row.version,
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
    version: plan.version,
  };
}

const ofThread = (scope: ThreadScope): SQL =>
  and(
    eq(plans.userId, scope.userId),
    eq(plans.agentId, agentColumn(scope.agentId)),
    eq(plans.threadId, scope.threadId),
  )!;

/** Plans in `kioku_plans`: one row per user + agent + thread; steps and context notes as JSON lists. */
export class SqlitePlanStore extends withPlanEdits(SqliteStoreBase) implements PlanStore {
  async create(scope: ThreadScope, input: PlanInput): Promise<Plan> {
    const s = parseThreadScope(scope);
    const plan = newPlan(s, input, isoAt(this.clock));
    this.write(() => {
      this.orm.delete(plans).where(ofThread(s)).run();
      this.orm.insert(plans).values(toRow(plan)).run();
    });
    return plan;
  }

  override async get(scope: ThreadScope): Promise<Plan | null> {
    const s = parseThreadScope(scope);
    const row = this.read(() => this.orm.select().from(plans).where(ofThread(s)).get());
    return row ? toPlan(row) : null;
  }

  async delete(scope: ThreadScope, options?: WriteOptions): Promise<boolean> {
    const s = parseThreadScope(scope);
    const { expectedVersion } = parseWriteOptions(options);
    return this.write(() => {
      const row = this.orm.select({ version: plans.version }).from(plans).where(ofThread(s)).get();
      if (!row) return false;
      checkPlanVersion(row, expectedVersion);
      return this.orm.delete(plans).where(ofThread(s)).run().changes > 0;
    });
  }

  async eraseUser(userId: string): Promise<string[]> {
    return this.eraseAll(userId, () =>
      this.orm
        .delete(plans)
        .where(eq(plans.userId, userId))
        .returning({ id: plans.id })
        .all()
        .map((r) => r.id),
    );
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
  override async modify(scope: ThreadScope, make: (now: string) => PlanEdit): Promise<Plan> {
    const edit = make(isoAt(this.clock));
    return this.write(() => {
      const row = this.orm.select().from(plans).where(ofThread(scope)).get();
      if (!row) throw missingPlanError();
      const next = edit(toPlan(row));
      this.orm.update(plans).set(toRow(next)).where(eq(plans.seq, row.seq)).run();
      return next;
    });
  }
}
