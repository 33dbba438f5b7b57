import { createHash } from 'node:crypto';
import {
  isoAt,
  missingPlanError,
  type NewStep,
  newPlan,
  type Plan,
  type PlanEdit,
  type PlanInput,
  PlanSchema,
  type PlanStore,
  parseThreadScope,
  planEdits,
  type RestoreOptions,
  type RestoreReport,
  type SnapshotEnvelope,
  type SnapshotSelector,
  type StepUpdate,
  StorageError,
  type ThreadScope,
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
    const plan = newPlan(s, input, isoAt(this.clock));
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
    return this.#modify(parseThreadScope(scope), planEdits.updateStep(stepId, update, isoAt(this.clock)));
  }

  async addStep(scope: ThreadScope, step: NewStep): Promise<Plan> {
    return this.#modify(parseThreadScope(scope), planEdits.addStep(step, isoAt(this.clock)));
  }

  async addContextNote(scope: ThreadScope, text: string): Promise<Plan> {
    return this.#modify(parseThreadScope(scope), planEdits.addContextNote(text, isoAt(this.clock)));
  }

  async complete(scope: ThreadScope): Promise<Plan> {
    return this.#modify(parseThreadScope(scope), planEdits.complete(isoAt(this.clock)));
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
  async #modify(scope: ThreadScope, edit: PlanEdit): Promise<Plan> {
    const key = this.#keyFor(scope);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const json = await this.connection.run('GET', () => this.connection.client.get(key));
      if (json === null) throw missingPlanError();
      const next = edit(parseJson<Plan>(json, 'plan'));
      const sha = createHash('sha1').update(json).digest('hex');
      const written = await this.connection.eval<number>(REPLACE, [key], [sha, JSON.stringify(next)]);
      if (written === 1) return next;
      if (written === 0) throw missingPlanError();
    }
    throw new StorageError(`Gave up changing the plan after ${MAX_ATTEMPTS} conflicting writes.`);
  }
}
