import { z } from 'zod';
import { type Clock, isoAt, systemClock } from '../../foundation/clock.js';
import type { Scope } from '../../foundation/scope.js';
import { parseOrThrow } from '../../foundation/validation.js';
import type { Fact } from '../../store/facts/record.js';
import type { FactStore } from '../../store/facts/store.js';
import { type Changeset, type FactOperation, newChangeset } from '../changesets/changeset.js';
import type { ChangesetLog, PassResult } from '../changesets/changeset-log.js';
import { changesetPass } from '../changesets/pass-telemetry.js';
import type { RecallLog, RecallStats } from './recall-log.js';

export const FactLimitsSchema = z
  .object({
    /** The most facts a user (+ agent) keeps; past it the least valuable are forgotten. */
    maxFacts: z.number().int().min(1).max(1_000_000),
    /**
     * Which facts go first: `least-recently-used` (default) — the longest since the fact was written or
     * shown to the model; `least-recalled` — shown to the model in the fewest turns of the recall log,
     * then the least recently used.
     */
    policy: z.enum(['least-recently-used', 'least-recalled']).default('least-recently-used'),
    /** Decay: a fact neither written nor shown to the model for this many days is forgotten, cap or not. */
    forgetUnusedAfterDays: z.number().positive().max(36_500).optional(),
  })
  .strict();

export type FactLimits = z.input<typeof FactLimitsSchema>;

/** Facts the limits never remove: by default those whose metadata says `pinned: true`. */
export type KeepFact = (fact: Fact) => boolean;

export const keepPinned: KeepFact = (fact) => fact.metadata.pinned === true;

const DAY_MS = 86_400_000;

export interface PlanEvictionOptions {
  facts: FactStore;
  recalls: RecallLog;
  scope: Scope;
  limits: FactLimits;
  keep?: KeepFact;
  clock?: Clock;
}

/**
 * The facts the limits forget, as a changeset of deletes (pass `eviction`), each with its reason: first
 * those past `forgetUnusedAfterDays`, then, while the user has more than `maxFacts`, the least valuable
 * by the policy. A fact's last use is the later of its last write and the last turn that showed it to the
 * model (the recall log). Facts `keep` protects are never proposed; when they alone exceed the cap, the
 * changeset's notes say so. Nothing is written.
 */
export async function planEviction(options: PlanEvictionOptions): Promise<Changeset> {
  const limits = parseOrThrow(FactLimitsSchema, options.limits, 'fact limits');
  const keep = options.keep ?? keepPinned;
  const clock = options.clock ?? systemClock;
  const [all, stats] = await Promise.all([
    options.facts.list(options.scope),
    options.recalls.stats(options.scope),
  ]);
  const used = all.map((fact) => usage(fact, stats.get(fact.id)));
  const operations: FactOperation[] = [];
  const notes: string[] = [];
  const gone = new Set<string>();

  if (limits.forgetUnusedAfterDays !== undefined) {
    const cutoff = new Date(clock.now() - limits.forgetUnusedAfterDays * DAY_MS).toISOString();
    for (const u of used) {
      if (u.lastUsed >= cutoff || keep(u.fact)) continue;
      gone.add(u.fact.id);
      operations.push({
        op: 'delete',
        before: u.fact,
        reason: `Not written or shown to the model since ${u.lastUsed.slice(0, 10)}, over ${limits.forgetUnusedAfterDays} days.`,
      });
    }
  }

  const excess = all.length - gone.size - limits.maxFacts;
  if (excess > 0) {
    const candidates = used
      .filter((u) => !gone.has(u.fact.id) && !keep(u.fact))
      .sort(limits.policy === 'least-recalled' ? byFewestRecalls : byLeastRecentUse);
    for (const u of candidates.slice(0, excess)) {
      operations.push({
        op: 'delete',
        before: u.fact,
        reason:
          `Over the limit of ${limits.maxFacts} facts: ` +
          (limits.policy === 'least-recalled'
            ? `shown to the model in ${u.recalls} recent turn${u.recalls === 1 ? '' : 's'}, last used ${u.lastUsed.slice(0, 10)}.`
            : `least recently used (last written or shown ${u.lastUsed.slice(0, 10)}).`),
      });
    }
    if (candidates.length < excess) {
      notes.push(
        `${all.length - gone.size - candidates.length} protected facts alone exceed the limit of ${limits.maxFacts}; they were kept.`,
      );
    }
  }
  return newChangeset('eviction', options.scope, operations, { createdAt: isoAt(clock), notes });
}

export interface EnforceFactLimitsOptions extends PlanEvictionOptions {
  /** Where the applied changeset is kept, so the eviction can be reverted by id. */
  changesets: ChangesetLog;
}

/**
 * `planEviction`, then apply and keep the changeset when it has anything to delete. A fact changed since
 * the plan read it is a conflict and stays (it was just used).
 */
export function enforceFactLimits(options: EnforceFactLimitsOptions): Promise<PassResult> {
  return changesetPass(
    'eviction',
    () => ({}),
    () => enforce(options),
  );
}

async function enforce(options: EnforceFactLimitsOptions): Promise<PassResult> {
  const changeset = await planEviction(options);
  if (changeset.operations.length === 0) return { changeset };
  const now = isoAt(options.clock ?? systemClock);
  return options.changesets.apply(options.facts, options.scope, changeset, now);
}

interface Usage {
  fact: Fact;
  lastUsed: string;
  recalls: number;
}

function usage(fact: Fact, recall: RecallStats | undefined): Usage {
  const recalled = recall?.lastRecalledAt ?? '';
  return {
    fact,
    // biome-ignore lint/complexity/useMathMinMax: ISO timestamps are strings; Math.max would give NaN.
    lastUsed: recalled > fact.updatedAt ? recalled : fact.updatedAt,
    recalls: recall?.recalls ?? 0,
  };
}

function byLeastRecentUse(a: Usage, b: Usage): number {
  return a.lastUsed < b.lastUsed ? -1 : a.lastUsed > b.lastUsed ? 1 : a.fact.id < b.fact.id ? -1 : 1;
}

function byFewestRecalls(a: Usage, b: Usage): number {
  return a.recalls - b.recalls || byLeastRecentUse(a, b);
}
