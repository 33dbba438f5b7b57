import { ValidationError } from '../foundation/errors.js';
import { parseScope, type Scope } from '../foundation/scope.js';
import {
  DREAM_LEASE,
  MEMORY_LEASE_DEFAULTS,
  MEMORY_WORK_LEASE,
  waitForLease,
} from '../memory/background/memory-lease.js';
import type { ApplyResult, RevertResult } from '../memory/changesets/apply.js';
import type { ChangesetLog, KeptChangeset, PassResult } from '../memory/changesets/changeset-log.js';
import { type Directives, resolveDirectives } from '../memory/dream/directives.js';
import { type DreamOptions, type DreamResult, dream } from '../memory/dream/dream.js';
import type { FeedbackLog } from '../memory/feedback/feedback-log.js';
import {
  type ConsolidateKnowledgeOptions,
  consolidateKnowledge,
} from '../memory/knowledge/consolidate-knowledge.js';
import { enforceFactLimits } from '../memory/limits/fact-limits.js';
import { RecallLog } from '../memory/limits/recall-log.js';
import type { ChatModel } from '../model/chat-model.js';
import { UsageLedger } from '../model/structured.js';
import { withLease } from '../runtime/lease.js';
import type { KiokuStores } from '../store/bundle/bundle.js';
import { baseScope } from '../store/sessions/own-session.js';
import { type Telemetry, withTelemetry } from '../telemetry/telemetry.js';
import { type FactLimitsWiring, type KiokuOptions, nowIso } from './options.js';

/**
 * The memory passes a model runs over the stores (the dream, knowledge consolidation, the fact limits) and
 * the review of what they changed: every pass writes a changeset that is kept, listed, applied later when
 * only proposed, and reverted exactly.
 */
export class MemoryPasses {
  readonly #stores: KiokuStores;
  readonly #options: KiokuOptions;
  readonly #changesets: ChangesetLog;
  readonly #feedback: FeedbackLog;
  readonly #factLimits: FactLimitsWiring | undefined;
  readonly #telemetry: Telemetry | undefined;

  constructor(wiring: {
    stores: KiokuStores;
    options: KiokuOptions;
    changesets: ChangesetLog;
    feedback: FeedbackLog;
    factLimits?: FactLimitsWiring | undefined;
    telemetry?: Telemetry | undefined;
  }) {
    this.#stores = wiring.stores;
    this.#options = wiring.options;
    this.#changesets = wiring.changesets;
    this.#feedback = wiring.feedback;
    this.#factLimits = wiring.factLimits;
    this.#telemetry = wiring.telemetry;
  }

  /**
   * The dream: consolidation, then preference inference, each a changeset that is applied and kept (or
   * only returned with `dryRun`; kept as `proposed` with `keep` too). Uses the builder's `model` and
   * `directives` unless others are given; reads the user's feedback and the conversation log since the
   * last dream, and clears the log after the preference pass.
   */
  dream(options: Omit<DreamOptions, 'stores' | 'model'> & { model?: ChatModel }): Promise<DreamResult> {
    return withTelemetry(this.#telemetry, () => this.#dream(options));
  }

  async #dream(
    options: Omit<DreamOptions, 'stores' | 'model'> & { model?: ChatModel },
  ): Promise<DreamResult> {
    const model = options.model ?? this.#options.model;
    if (!model) {
      throw new ValidationError(
        'The dream needs a model: give KiokuBuilder a `model`, or pass one to dream().',
      );
    }
    const { clock } = this.#options;
    const directives = options.directives ?? (await this.directives());
    const scope = parseScope(options.scope);
    const run = async (signal: AbortSignal) => {
      const result = await dream({
        ...(clock ? { clock } : {}),
        changesets: this.#changesets,
        feedbackLog: this.#feedback,
        ...options,
        signal: options.signal ? AbortSignal.any([options.signal, signal]) : signal,
        directives,
        stores: this.#stores,
        model,
      });
      // The fact limits last (decay included), over what the passes left; not on a dry run.
      if (this.#factLimits && !options.dryRun) {
        const { changeset, result: applied } = await this.#enforceFactLimits(scope);
        result.passes.push({ pass: 'eviction', changeset, ...(applied ? { result: applied } : {}) });
      }
      return result;
    };
    // One dream per user at a time across app instances (a second one answers busy), and inside it the
    // memory-work lease, so no background job of the user writes meanwhile.
    const leases = clock ? { clock } : {};
    const outcome = await withLease(
      this.#stores.working,
      scope,
      DREAM_LEASE,
      (signal) => waitForLease(this.#stores.working, scope, MEMORY_WORK_LEASE, run, { ...leases, signal }),
      { ttlMs: MEMORY_LEASE_DEFAULTS.ttlMs, ...leases },
    );
    if (outcome.status === 'done') return outcome.value;
    return {
      passes: [],
      usage: new UsageLedger(),
      busy: { holder: outcome.holder, expiresAt: outcome.expiresAt },
    };
  }

  /**
   * Consolidation of offloaded tool outputs into knowledge: outputs that recur (same tool and arguments)
   * become knowledge documents, as a changeset (pass `knowledge`) applied and kept like the dream's —
   * `revert(scope, id)` deletes the documents again — or, with `dryRun` (and `keep`), only proposed. Uses
   * the builder's `model` to write each document unless `model` is given or `false` (then each document is
   * assembled from the outputs).
   */
  consolidateKnowledge(
    scope: Omit<Scope, 'threadId'>,
    options: Omit<ConsolidateKnowledgeOptions, 'stores' | 'scope' | 'model'> & {
      model?: ChatModel | false;
    } = {},
  ): Promise<PassResult> {
    const { model, ...rest } = options;
    const chosen = model === false ? undefined : (model ?? this.#options.model);
    const { clock, tokenizer } = this.#options;
    return withTelemetry(this.#telemetry, () =>
      consolidateKnowledge({
        ...(clock ? { clock } : {}),
        ...(tokenizer ? { tokenizer } : {}),
        changesets: this.#changesets,
        ...rest,
        ...(chosen ? { model: chosen } : {}),
        stores: this.#stores,
        scope: parseScope(scope),
      }),
    );
  }

  /** The directives configured on the builder (files read now), or none. */
  directives(): Promise<Directives> {
    return resolveDirectives(this.#options.directives);
  }

  /** The user's kept changesets, oldest first, each with its status (proposed, applied, reverted, …). */
  changesets(scope: Omit<Scope, 'threadId'>): Promise<KeptChangeset[]> {
    return this.#changesets.list(parseScope(scope));
  }

  /**
   * Apply a changeset a dry run kept as `proposed` (`dream({ dryRun: true, keep: true })`), by id: records
   * changed since are conflicts (reported, left as they are). NOT_FOUND when it is not kept, CONFLICT when
   * it is not proposed.
   */
  applyKept(scope: Omit<Scope, 'threadId'>, id: string): Promise<ApplyResult> {
    return this.#changesets.applyKept(this.#stores, parseScope(scope), id, nowIso(this.#options.clock));
  }

  /** Revert an applied changeset by id, restoring the exact prior records (changes made since are conflicts). */
  revert(scope: Omit<Scope, 'threadId'>, id: string): Promise<RevertResult> {
    return this.#changesets.revert(this.#stores, parseScope(scope), id, nowIso(this.#options.clock));
  }

  /**
   * Apply the fact limits of `withFactLimits` to the user now (they also run after a turn that exceeds the
   * cap, and at the end of every dream): the eviction changeset, applied and kept, or with nothing to do.
   */
  enforceFactLimits(scope: Omit<Scope, 'threadId'>): Promise<PassResult> {
    return withTelemetry(this.#telemetry, () => this.#enforceFactLimits(parseScope(scope)));
  }

  #enforceFactLimits(scope: Scope): Promise<PassResult> {
    const limits = this.#factLimits;
    if (!limits) {
      return Promise.reject(
        new ValidationError('No fact limits are configured: call withFactLimits() on the builder.'),
      );
    }
    const { keep, ...rest } = limits;
    return enforceFactLimits({
      facts: this.#stores.facts,
      recalls: new RecallLog(this.#stores.sessions),
      scope: baseScope(scope),
      limits: rest,
      changesets: this.#changesets,
      ...(keep ? { keep } : {}),
      ...(this.#options.clock ? { clock: this.#options.clock } : {}),
    });
  }
}
