import { createHash } from 'node:crypto';
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
  type PlanStore,
  parseOrThrow,
  parseThreadScope,
  type RestoreOptions,
  type RestoreReport,
  type SnapshotEnvelope,
  type SnapshotSelector,
  type StepUpdate,
  StepUpdateSchema,
  StorageError,
  shortId,
  type ThreadScope,
  ValidationError,
} from '@kioku/core';
import { RedisStoreBase } from './base.js';
import { lua } from './connection.js';
import { encodePart, NO_AGENT } from './keys.js';
import { parseJson } from './records.js';

// Compare-and-set on the SHA-1 of the stored plan: 1 written, 0 gone, -1 changed since it was read.
const REPLACE = lua(`
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
if redis.sha1hex(current) ~= ARGV[1] then return -1 end
redis.call('SET', KEYS[1], ARGV[2])
return 1
`);

const MAX_ATTEMPTS = 100;

/** One plan per thread, as a JSON string at `plans:{user}:agent:thread`. Changes are compare-and-set. */
export class RedisPlanStore extends RedisStoreBase implements PlanStore {
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
    const key = this.#keyFor(s);
    await this.connection.run('SET', () => this.connection.client.set(key, JSON.stringify(plan)));
    return plan;
  }

  async get(scope: ThreadScope): Promise<Plan | null> {
    const key = this.#keyFor(parseThreadScope(scope));
    const json = await this.connection.run('GET', () => this.connection.client.get(key));
    return json === null ? null : parseJson<Plan>(json, 'plan');
  }

  async has(scope: ThreadScope): Promise<boolean> {
    const key = this.#keyFor(parseThreadScope(scope));
    return (await this.connection.run('EXISTS', () => this.connection.client.exists(key))) === 1;
  }

  async updateStep(scope: ThreadScope, stepId: string, update: StepUpdate): Promise<Plan> {
    const s = parseThreadScope(scope);
    const changes = parseOrThrow(StepUpdateSchema, update, 'step update');
    const now = isoAt(this.clock);
    return this.#modify(s, (plan) => {
      const index = plan.steps.findIndex((step) => step.id === stepId);
      if (index < 0) throw new NotFoundError(`Plan has no step "${stepId}".`, { details: { stepId } });
      const steps = [...plan.steps];
      const step = { ...steps[index]!, updatedAt: now };
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
    const key = this.#keyFor(parseThreadScope(scope));
    return (await this.connection.run('DEL', () => this.connection.client.del(key))) === 1;
  }

  async snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<Plan>> {
    return this.snapshotOf('plans', selector, async (userId) => {
      const found = await this.partitionsOf('plans', '', userId);
      if (found.length === 0) return [];
      const values = await this.connection.run('MGET', () =>
        this.connection.client.mget(...found.map((f) => f.key)),
      );
      return values.flatMap((json) => (json === null ? [] : [parseJson<Plan>(json, 'plan')]));
    });
  }

  async restore(snapshot: unknown, options: RestoreOptions = {}): Promise<RestoreReport> {
    return this.restoreFrom('plans', PlanSchema, snapshot, options, {
      userIdOf: (p) => p.userId,
      partitionOf: (p) => `${p.userId}/${p.agentId ?? NO_AGENT}/${p.threadId}`,
      idOf: () => 'plan',
      replace: (multi, [plan]) => {
        multi.set(this.#keyFor(plan!), JSON.stringify(plan));
      },
    });
  }

  #keyFor(scope: { userId: string; agentId?: string | undefined; threadId: string }): string {
    return `${this.keys.base('plans', scope)}:${encodePart(scope.threadId)}`;
  }

  /** Read, change and write the thread's plan only if nobody changed it in between (else read again). */
  async #modify(scope: ThreadScope, change: (plan: Plan) => Plan): Promise<Plan> {
    const key = this.#keyFor(scope);
    const missing = 'This conversation has no plan; create one first.';
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const json = await this.connection.run('GET', () => this.connection.client.get(key));
      if (json === null) throw new NotFoundError(missing);
      const next = change(parseJson<Plan>(json, 'plan'));
      const sha = createHash('sha1').update(json).digest('hex');
      const written = await this.connection.eval<number>(REPLACE, [key], [sha, JSON.stringify(next)]);
      if (written === 1) return next;
      if (written === 0) throw new NotFoundError(missing);
    }
    throw new StorageError(`Gave up changing the plan after ${MAX_ATTEMPTS} conflicting writes.`);
  }
}
