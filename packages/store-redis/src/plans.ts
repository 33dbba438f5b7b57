import { createHash } from 'node:crypto';
import { type Plan, StorageError } from '@kioku/core';
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

// Compare-and-delete on the SHA-1 of the stored plan: 1 deleted, 0 gone, -1 changed since it was read.
const DELETE_IF = lua(`
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
if redis.sha1hex(current) ~= ARGV[1] then return -1 end
redis.call('DEL', KEYS[1])
return 1
`);

const MAX_ATTEMPTS = 100;

const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');

/** Stored plan JSON (validated when written); plans stored before versions existed read as version 1. */
function parsePlan(json: string): Plan {
  const plan = parseJson<Plan>(json, 'plan');
  plan.version ??= 1;
  return plan;
}

/** One plan per thread, as a JSON string at `plans:{user}:agent:thread`. Changes are compare-and-set. */
export class RedisPlanStore extends withPlanEdits(RedisStoreBase) implements PlanStore {
  async create(scope: ThreadScope, input: PlanInput): Promise<Plan> {
    const s = parseThreadScope(scope);
    const plan = newPlan(s, input, isoAt(this.clock));
    const key = this.#keyFor(s);
    await this.connection.run('SET', () => this.connection.client.set(key, JSON.stringify(plan)));
    return plan;
  }

  override async get(scope: ThreadScope): Promise<Plan | null> {
    const key = this.#keyFor(parseThreadScope(scope));
    const json = await this.connection.run('GET', () => this.connection.client.get(key));
    return json === null ? null : parsePlan(json);
  }

  // Each edit checks options.expectedVersion against the plan it is applied to (CONFLICT, nothing
  // written) and bumps the version; a compare-and-set retry applies it, and so checks again, to the fresh plan.

  async delete(scope: ThreadScope, options?: WriteOptions): Promise<boolean> {
    const key = this.#keyFor(parseThreadScope(scope));
    const { expectedVersion } = parseWriteOptions(options);
    if (expectedVersion === undefined) {
      return (await this.connection.run('DEL', () => this.connection.client.del(key))) === 1;
    }
    // Read, check the version, delete only if the plan is still what was read (else read and check again).
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const json = await this.connection.run('GET', () => this.connection.client.get(key));
      if (json === null) return false;
      checkPlanVersion(parsePlan(json), expectedVersion);
      const deleted = await this.connection.eval<number>(DELETE_IF, [key], [sha1(json)]);
      if (deleted !== -1) return deleted === 1;
    }
    throw new StorageError(`Gave up clearing the plan after ${MAX_ATTEMPTS} conflicting writes.`);
  }

  eraseUser(userId: string): Promise<string[]> {
    return this.eraseKeys('plans', userId, async () =>
      (await this.snapshot({ userId })).records.map((r) => r.id),
    );
  }

  async snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<Plan>> {
    return this.snapshotOf('plans', selector, async (userId) => {
      const found = await this.partitionsOf('plans', '', userId);
      if (found.length === 0) return [];
      const values = await this.connection.run('MGET', () =>
        this.connection.client.mget(...found.map((f) => f.key)),
      );
      return values.flatMap((json) => (json === null ? [] : [parsePlan(json)]));
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
  override async modify(scope: ThreadScope, make: (now: string) => PlanEdit): Promise<Plan> {
    const edit = make(isoAt(this.clock));
    const key = this.#keyFor(scope);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const json = await this.connection.run('GET', () => this.connection.client.get(key));
      if (json === null) throw missingPlanError();
      const next = edit(parsePlan(json));
      const written = await this.connection.eval<number>(REPLACE, [key], [sha1(json), JSON.stringify(next)]);
      if (written === 1) return next;
      if (written === 0) throw missingPlanError();
    }
    throw new StorageError(`Gave up changing the plan after ${MAX_ATTEMPTS} conflicting writes.`);
  }
}
