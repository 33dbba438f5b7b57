import type { Plan } from '@kioku/core';
import {
  checkPlanVersion,
  isoAt,
  makeEnvelope,
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
import { and, asc, eq, type SQL, sql } from 'drizzle-orm';
import { groupByPartition, parseSnapshot, selectedUser } from './snapshot.js';
import { agentField, agentKey, batches } from './sql.js';
import { PostgresStore } from './store.js';

/**
 * PlanStore on PostgreSQL: one row per thread in `plans` (steps and context notes as JSON). Changes to a
 * plan lock its row (`SELECT … FOR UPDATE`), so concurrent step updates from any process all apply; each
 * checks the expected version (core's edits) on the locked row and writes the next version.
 */
export class PostgresPlanStore extends withPlanEdits(PostgresStore) implements PlanStore {
  /** The thread's plan, which the plan block reads every turn: built once, run as a prepared statement. */
  #getPlan: ReturnType<PostgresPlanStore['buildGet']> | undefined;

  private buildGet() {
    const t = this.tables.plans;
    const p = sql.placeholder;
    return this.database.db
      .select()
      .from(t)
      .where(and(eq(t.userId, p('userId')), eq(t.agentId, p('agentId')), eq(t.threadId, p('threadId'))))
      .prepare('kioku_plans_get');
  }

  async create(scope: ThreadScope, input: PlanInput): Promise<Plan> {
    const s = parseThreadScope(scope);
    const plan = newPlan(s, input, isoAt(this.clock));
    const t = this.tables.plans;
    const { userId: _u, agentId: _a, threadId: _t, ...replace } = toRow(plan);
    await this.database.run((db) =>
      db
        .insert(t)
        .values(toRow(plan))
        .onConflictDoUpdate({ target: [t.userId, t.agentId, t.threadId], set: replace }),
    );
    return plan;
  }

  override async get(scope: ThreadScope): Promise<Plan | null> {
    const s = parseThreadScope(scope);
    const rows = await this.database.run(() => {
      this.#getPlan ??= this.buildGet();
      return this.#getPlan.execute({ userId: s.userId, agentId: agentKey(s.agentId), threadId: s.threadId });
    });
    return rows[0] ? toPlan(rows[0]) : null;
  }

  async delete(scope: ThreadScope, options?: WriteOptions): Promise<boolean> {
    const s = parseThreadScope(scope);
    const { expectedVersion } = parseWriteOptions(options);
    const t = this.tables.plans;
    if (expectedVersion === undefined) {
      const rows = await this.database.run((db) =>
        db.delete(t).where(this.#thread(s)).returning({ id: t.id }),
      );
      return rows.length > 0;
    }
    // With an expected version: lock the row, check it (CONFLICT leaves the plan), then delete it.
    return this.database.transaction(async (tx) => {
      const [row] = await tx.select({ version: t.version }).from(t).where(this.#thread(s)).for('update');
      if (!row) return false;
      checkPlanVersion(row, expectedVersion);
      await tx.delete(t).where(this.#thread(s));
      return true;
    });
  }

  /** One statement. */
  async eraseUser(userId: string): Promise<string[]> {
    selectedUser({ userId });
    const t = this.tables.plans;
    const rows = await this.database.run((db) =>
      db.delete(t).where(eq(t.userId, userId)).returning({ id: t.id }),
    );
    return rows.map((r) => r.id);
  }

  async snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<Plan>> {
    const { parsed, userId } = selectedUser(selector);
    const t = this.tables.plans;
    const rows = await this.database.run((db) =>
      db
        .select()
        .from(t)
        .where(userId === undefined ? undefined : eq(t.userId, userId))
        .orderBy(asc(t.userId), asc(t.agentId), asc(t.threadId)),
    );
    return makeEnvelope('plans', parsed, rows.map(toPlan), this.clock);
  }

  /** Replaces the plan of every thread the snapshot contains, in one transaction. */
  async restore(snapshot: unknown, options: RestoreOptions = {}): Promise<RestoreReport> {
    const records = parseSnapshot('plans', PlanSchema, snapshot, options, (p) => p.userId);
    // A thread holds one plan: two plans of one thread are duplicates.
    const groups = groupByPartition(
      records,
      (p) => p,
      (p) => `${p.userId}|${agentKey(p.agentId)}|${p.threadId}`,
      () => 'plan',
    );
    const t = this.tables.plans;
    // Restores of plans take turns: two replacing overlapping partitions could otherwise deadlock.
    await this.database.lockedTransaction('plans-restore', undefined, async (tx) => {
      for (const batch of batches(groups)) {
        for (const { partition } of batch) await tx.delete(t).where(this.#thread(partition));
        await tx.insert(t).values(batch.map(({ partition }) => toRow(partition)));
      }
    });
    return { records: records.length, partitions: groups.length };
  }

  /**
   * Read-modify-write of the thread's plan under a row lock: `edit` (core's, made with the caller's write
   * options) refuses a plan at another version than expected and returns the next version, written here.
   */
  override async modify(scope: ThreadScope, make: (now: string) => PlanEdit): Promise<Plan> {
    const edit = make(isoAt(this.clock));
    const t = this.tables.plans;
    return this.database.transaction(async (tx) => {
      const [row] = await tx.select().from(t).where(this.#thread(scope)).for('update');
      if (!row) throw missingPlanError();
      const next = edit(toPlan(row));
      const { userId: _u, agentId: _a, threadId: _t, ...fields } = toRow(next);
      await tx.update(t).set(fields).where(this.#thread(scope));
      return next;
    });
  }

  #thread(scope: { userId: string; agentId?: string | undefined; threadId: string }): SQL {
    const t = this.tables.plans;
    return and(
      eq(t.userId, scope.userId),
      eq(t.agentId, agentKey(scope.agentId)),
      eq(t.threadId, scope.threadId),
    )!;
  }
}

function toRow(plan: Plan) {
  return {
    userId: plan.userId,
    agentId: agentKey(plan.agentId),
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

function toPlan(row: ReturnType<typeof toRow>): Plan {
  return {
    id: row.id,
    userId: row.userId,
    ...agentField(row.agentId),
    threadId: row.threadId,
    goal: row.goal,
    steps: row.steps,
    contextNotes: row.contextNotes,
    isComplete: row.isComplete,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    ...(row.completedAt === null ? {} : { completedAt: row.completedAt }),
    version: row.version,
  };
}
