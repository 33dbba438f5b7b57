import type { Clock } from '../foundation/clock.js';
import { NotFoundError, ValidationError } from '../foundation/errors.js';
import { parseScope, type Scope } from '../foundation/scope.js';
import { parseOrThrow } from '../foundation/validation.js';
import {
  DREAM_LEASE,
  MEMORY_LEASE_DEFAULTS,
  MEMORY_WORK_LEASE,
  memoryWorkGuard,
  waitForLease,
} from '../memory/background/memory-lease.js';
import { BackgroundQueue, type BackgroundQueueOptions } from '../memory/background/queue.js';
import type { ApplyResult, RevertResult } from '../memory/changesets/apply.js';
import { ChangesetLog, type KeptChangeset, type PassResult } from '../memory/changesets/changeset-log.js';
import { type Directives, type DirectivesOption, resolveDirectives } from '../memory/dream/directives.js';
import { type DreamOptions, type DreamResult, dream } from '../memory/dream/dream.js';
import { type ExtractionFeatureOptions, extraction } from '../memory/extraction/index.js';
import { type DynamicMemoryOptions, dynamicMemory } from '../memory/facts/all/index.js';
import { type LongTermMemoryOptions, longTermMemory } from '../memory/facts/recall/index.js';
import { memoryManager } from '../memory/facts/relevant/index.js';
import type { MemoryManagerOptions } from '../memory/facts/relevant/manager.js';
import { type FeedbackInput, FeedbackLog } from '../memory/feedback/feedback-log.js';
import { type FeedbackFeatureOptions, feedback } from '../memory/feedback/index.js';
import type { FeedbackSignal } from '../memory/feedback/signal.js';
import {
  type CascadeResult,
  type ErasureCheck,
  type ErasureReceipt,
  type ForgetUserOptions,
  forgetFact,
  forgetSession,
  forgetUser,
  verifyErased,
} from '../memory/forget/index.js';
import { type ConversationHistoryOptions, conversationHistory } from '../memory/history/index.js';
import {
  type ConsolidateKnowledgeOptions,
  consolidateKnowledge,
} from '../memory/knowledge/consolidate-knowledge.js';
import { type StaticMemoryOptions, staticMemory } from '../memory/knowledge/index.js';
import {
  enforceFactLimits,
  type FactLimits,
  FactLimitsSchema,
  type KeepFact,
} from '../memory/limits/fact-limits.js';
import { factLimits } from '../memory/limits/index.js';
import { RecallLog } from '../memory/limits/recall-log.js';
import {
  memoryRefExpansion,
  type RefExpansionOptions,
  type ToolOutputOffloadOptions,
  toolOutputOffload,
} from '../memory/offload/index.js';
import { type PlanModeOptions, planMode } from '../memory/plans/index.js';
import { MEMORY_NOTICE } from '../memory/trust/fence.js';
import {
  confirmQuarantined,
  dropQuarantined,
  listQuarantined,
  requarantine,
} from '../memory/trust/quarantine.js';
import { type WorkingMemoryFeatureOptions, workingMemory } from '../memory/working/index.js';
import type { ChatModel } from '../model/chat-model.js';
import { UsageLedger } from '../model/structured.js';
import { Conversation } from '../runtime/conversation.js';
import type { MemoryFeature } from '../runtime/feature.js';
import type { IntentClassifier, RecallMode } from '../runtime/intent/recall.js';
import { withLease } from '../runtime/lease.js';
import type { TokenBudgetOptions } from '../runtime/token-budget.js';
import type { KiokuStores } from '../store/bundle/bundle.js';
import { type EmbeddingsOptions, withEmbeddings } from '../store/bundle/with-embeddings.js';
import type { Embedder } from '../store/embeddings/embedder.js';
import type { Fact } from '../store/facts/record.js';
import { baseScope } from '../store/sessions/own-session.js';
import type { SessionCreateOptions } from '../store/sessions/record.js';
import type { Tokenizer } from '../tokens/tokenizer.js';

export interface KiokuOptions {
  /** Every store the features use, from one call: `createJsonStores(…)`, `createSqliteStores(…)`, … */
  stores: KiokuStores;
  /**
   * Hybrid recall (lexical + vector) for the whole bundle, wired once: an embedder, or the embedder with
   * its index and tuning (see `withEmbeddings`). Every feature then searches through the same stores.
   */
  embeddings?: Embedder | EmbeddingsOptions;
  /**
   * The model memory work in the background uses (extraction, save_memory's enrichment, the dream); may
   * be a cheaper one.
   */
  model?: ChatModel;
  /**
   * Instructions that replace the built-in prompts of the memory passes: loaded texts, or a directory
   * whose `dream.md`, `pref-dream.md` and `memory-rules.md` are read (when present) at every dream.
   */
  directives?: DirectivesOption;
  /**
   * The queue background memory work runs on (extraction after a turn, save_memory's enrichment): its
   * bound (`maxPending`, default 100), `onEvent` for what it did or failed to do, and a `guard` (e.g. a
   * per-user lease when several app instances share the stores).
   */
  background?: BackgroundQueueOptions;
  systemPrompt?: string;
  budget?: TokenBudgetOptions;
  /**
   * When recall (long-term memory, the memory manager) searches memory: `always` (the default), `auto`
   * (an intent step decides per turn, skipping recall for a concrete message) or `never`. A turn can
   * override it (`conversation.run(message, model, { recall })`).
   */
  recall?: RecallMode;
  /** The intent step of `recall: 'auto'`: the deterministic classifier unless given (e.g. `modelIntentClassifier`). */
  intent?: IntentClassifier;
  tokenizer?: Tokenizer;
  clock?: Clock;
}

/** What a feature factory is handed by the builder: the wired stores and the shared settings. */
export interface FeatureContext {
  readonly stores: KiokuStores;
  /** The queue for work after the reply; `Kioku.flush()` / `close()` wait for it. */
  readonly background: BackgroundQueue;
  readonly model?: ChatModel | undefined;
  readonly tokenizer?: Tokenizer | undefined;
  readonly clock?: Clock | undefined;
}

/** A feature made from the builder's stores (so an app never passes a store to a feature). */
export type FeatureFactory = (context: FeatureContext) => MemoryFeature;

/** `withFactLimits`'s options: the cap, policy and decay, and which facts are never removed. */
export type FactLimitsWiring = FactLimits & { keep?: KeepFact };

/** What the builder hands the `Kioku` it builds besides the options and features. */
interface KiokuWiring {
  background?: BackgroundQueue;
  factLimits?: FactLimitsWiring;
}

/** A configured memory stack: features in registration order, ready to start or resume conversations. */
export class Kioku {
  readonly features: readonly MemoryFeature[];
  /** The stores every feature reads and writes (with embeddings, when configured). */
  readonly stores: KiokuStores;
  /** Where background memory work runs (extraction, enrichment). */
  readonly background: BackgroundQueue;
  readonly #options: KiokuOptions;
  readonly #changesets: ChangesetLog;
  readonly #feedback: FeedbackLog;
  readonly #factLimits: FactLimitsWiring | undefined;

  constructor(options: KiokuOptions, features: readonly MemoryFeature[], wiring: KiokuWiring = {}) {
    this.#options = options;
    this.#factLimits = wiring.factLimits;
    this.stores = options.stores;
    this.features = Object.freeze([...features]);
    this.#changesets = new ChangesetLog(options.stores.sessions);
    this.#feedback = new FeedbackLog(options.stores.sessions, options.clock ? { clock: options.clock } : {});
    this.background = wiring.background ?? new BackgroundQueue(options.background);
  }

  /** Resolves when the background work queued so far (extractions, enrichments) has finished. */
  flush(): Promise<void> {
    return this.background.flush();
  }

  /**
   * Take no more background work and wait for what is queued; with `signal`, stop waiting when it aborts
   * (running jobs see it abort). The stores stay open: they are the app's to close.
   */
  close(options: { signal?: AbortSignal } = {}): Promise<void> {
    return this.background.close(options);
  }

  /** A new session for the user (and agent), and its conversation. */
  async startConversation(
    scope: Omit<Scope, 'threadId'>,
    session?: SessionCreateOptions,
  ): Promise<Conversation> {
    const s = parseScope(scope);
    const info = await this.stores.sessions.create({ userId: s.userId, agentId: s.agentId }, session);
    return this.#conversation({ userId: s.userId, agentId: s.agentId, threadId: info.id });
  }

  /** An existing session's conversation. NotFoundError when the session is not the user's. */
  async resumeConversation(scope: Omit<Scope, 'threadId'>, sessionId: string): Promise<Conversation> {
    const s = parseScope(scope);
    const info = await this.stores.sessions.get({ userId: s.userId, agentId: s.agentId }, sessionId);
    if (!info) {
      throw new NotFoundError(
        `Cannot resume session "${sessionId}": it is not one of this user's sessions (or it was deleted). Start a new one with startConversation().`,
        { details: { sessionId } },
      );
    }
    return this.#conversation({ userId: s.userId, agentId: s.agentId, threadId: info.id });
  }

  /**
   * The dream over this stack's stores: consolidation, then preference inference, each a changeset that
   * is applied and kept (or only returned with `dryRun`; kept as `proposed` with `keep` too). Uses the
   * builder's `model` and `directives` unless others are given; reads the user's feedback and the
   * conversation log since the last dream, and clears the log after the preference pass.
   */
  async dream(options: Omit<DreamOptions, 'stores' | 'model'> & { model?: ChatModel }): Promise<DreamResult> {
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
        stores: this.stores,
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
      this.stores.working,
      scope,
      DREAM_LEASE,
      (signal) => waitForLease(this.stores.working, scope, MEMORY_WORK_LEASE, run, { ...leases, signal }),
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
   * Consolidation of layer 2 into knowledge: offloaded outputs that recur (same tool and arguments) become
   * knowledge documents for static memory, as a changeset (pass `knowledge`) applied and kept like the
   * dream's — `revert(scope, id)` deletes the documents again — or, with `dryRun` (and `keep`), only
   * proposed. Uses the builder's `model` to write each document unless `model` is given or `false` (then
   * each document is assembled from the outputs).
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
    return consolidateKnowledge({
      ...(clock ? { clock } : {}),
      ...(tokenizer ? { tokenizer } : {}),
      changesets: this.#changesets,
      ...rest,
      ...(chosen ? { model: chosen } : {}),
      stores: this.stores,
      scope: parseScope(scope),
    });
  }

  /** The directives configured on the builder (files read now), or none. */
  directives(): Promise<Directives> {
    return resolveDirectives(this.#options.directives);
  }

  /**
   * Record feedback for the scope's user (and agent): a correction, or what they liked or disliked (a
   * thumbs-down button, say). The dream's consolidation reads the last 7 days of it.
   */
  recordFeedback(scope: Omit<Scope, 'threadId'>, signal: FeedbackInput): Promise<FeedbackSignal> {
    return this.#feedback.record(scope, signal);
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
    return this.#changesets.applyKept(this.stores, parseScope(scope), id, this.#now());
  }

  /** Revert an applied changeset by id, restoring the exact prior records (changes made since are conflicts). */
  revert(scope: Omit<Scope, 'threadId'>, id: string): Promise<RevertResult> {
    return this.#changesets.revert(this.stores, parseScope(scope), id, this.#now());
  }

  /**
   * Erase every record of `userId` from every store and the vector index (every agent, Kioku's own
   * sessions too) and return the erasure receipt. Background work queued so far runs first, so it cannot
   * write for the user afterwards. See `forgetUser` in `forget/forget-user.ts`.
   */
  async forgetUser(userId: string, options: Omit<ForgetUserOptions, 'clock'> = {}): Promise<ErasureReceipt> {
    await this.flush();
    const { clock } = this.#options;
    return forgetUser(this.stores, userId, { ...options, ...(clock ? { clock } : {}) });
  }

  /** Scan every kind and the vector index: `{ erased: true }`, or what is left of `userId`. */
  verifyErased(userId: string): Promise<ErasureCheck> {
    return verifyErased(this.stores, userId);
  }

  /** Forget one fact, its vector and the facts derived from it through provenance. */
  forgetFact(scope: Omit<Scope, 'threadId'>, factId: string): Promise<CascadeResult> {
    return forgetFact(this.stores, scope, factId);
  }

  /** Forget one session with its transcript, k-v map, plan, offloaded details and the facts extracted from it. */
  forgetSession(scope: Omit<Scope, 'threadId'>, sessionId: string): Promise<CascadeResult> {
    return forgetSession(this.stores, scope, sessionId);
  }

  /**
   * The user's quarantined memories, oldest first: facts a tool, a document or a model pass wrote whose
   * text reads like instructions. `provenance.quarantine` says which detector rules fired and on what.
   */
  listQuarantined(scope: Omit<Scope, 'threadId'>): Promise<Fact[]> {
    return listQuarantined(this.stores.facts, parseScope(scope));
  }

  /**
   * The user confirms a quarantined memory: it is recalled like any other from now on. The mark moves
   * to `provenance.confirmed`; `requarantine` undoes this. VALIDATION when the fact is not quarantined.
   */
  confirmMemory(scope: Omit<Scope, 'threadId'>, id: string): Promise<Fact> {
    return confirmQuarantined(this.stores.facts, parseScope(scope), id, this.#now());
  }

  /** Put a confirmed memory back in quarantine (undo `confirmMemory`). */
  requarantine(scope: Omit<Scope, 'threadId'>, id: string): Promise<Fact> {
    return requarantine(this.stores.facts, parseScope(scope), id);
  }

  /** Delete a quarantined memory; returns what was deleted. VALIDATION when the fact is not quarantined. */
  dropQuarantined(scope: Omit<Scope, 'threadId'>, id: string): Promise<Fact> {
    return dropQuarantined(this.stores.facts, parseScope(scope), id);
  }

  /**
   * Apply the fact limits of `withFactLimits` to the user now (they also run after a turn that exceeds the
   * cap, and at the end of every dream): the eviction changeset, applied and kept, or with nothing to do.
   */
  enforceFactLimits(scope: Omit<Scope, 'threadId'>): Promise<PassResult> {
    return this.#enforceFactLimits(parseScope(scope));
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
      facts: this.stores.facts,
      recalls: new RecallLog(this.stores.sessions),
      scope: baseScope(scope),
      limits: rest,
      changesets: this.#changesets,
      ...(keep ? { keep } : {}),
      ...(this.#options.clock ? { clock: this.#options.clock } : {}),
    });
  }

  /** The app's system prompt, and `MEMORY_NOTICE` when a feature puts memory blocks in the prompt. */
  #systemPrompt(): string | undefined {
    const { systemPrompt } = this.#options;
    if (!this.features.some((f) => f.middleware?.placement === 'system')) return systemPrompt;
    return systemPrompt ? `${systemPrompt}\n\n${MEMORY_NOTICE}` : MEMORY_NOTICE;
  }

  #now(): string {
    return new Date(this.#options.clock?.now() ?? Date.now()).toISOString();
  }

  #conversation(scope: Scope & { threadId: string }): Conversation {
    const { budget, tokenizer, clock, recall, intent } = this.#options;
    const systemPrompt = this.#systemPrompt();
    return new Conversation({
      scope,
      sessions: this.stores.sessions,
      features: this.features,
      ...(systemPrompt === undefined ? {} : { systemPrompt }),
      ...(budget === undefined ? {} : { budget }),
      ...(tokenizer === undefined ? {} : { tokenizer }),
      ...(clock === undefined ? {} : { clock }),
      ...(recall === undefined ? {} : { recall }),
      ...(intent === undefined ? {} : { intent }),
    });
  }
}

type Without<T, K extends keyof T> = Omit<T, K>;

/** `withLongTermMemory`'s options: enrichment uses the builder's model and queue unless told otherwise. */
export type LongTermMemoryBuilderOptions = Without<
  LongTermMemoryOptions,
  'store' | 'sessions' | 'enrichment'
> & {
  /** Default: on when there is a model. `false` turns it off. */
  enrichment?: false | { model?: ChatModel; directive?: string };
};

/** `withExtraction`'s options: the builder's stores, queue and (unless given) model. */
export type ExtractionBuilderOptions = Without<
  ExtractionFeatureOptions,
  'stores' | 'background' | 'model'
> & { model?: ChatModel };

/**
 * The one wiring point: the stores bundle (and embeddings, budget, model) go in once; each `with*` adds
 * a seed feature with only its own options and hands it the store it needs.
 */
export class KiokuBuilder {
  readonly #options: KiokuOptions;
  readonly #features: MemoryFeature[] = [];
  readonly #background: BackgroundQueue;
  #factLimits: FactLimitsWiring | undefined;

  constructor(options: KiokuOptions) {
    const { embeddings } = options;
    const stores =
      embeddings === undefined
        ? options.stores
        : withEmbeddings(options.stores, 'embed' in embeddings ? { embedder: embeddings } : embeddings);
    this.#options = { ...options, stores };
    // By default each background job holds the user's memory-work lease, so several app instances over
    // one database can all run background work (an app's own guard replaces it).
    const clock = options.clock ? { clock: options.clock } : {};
    this.#background = new BackgroundQueue({
      guard: memoryWorkGuard(stores.working, clock),
      ...options.background,
    });
  }

  /** The stores features get (the bundle, with embeddings when configured). */
  get stores(): KiokuStores {
    return this.#options.stores;
  }

  /** Register a feature, or a factory given the wired stores; its middleware runs after earlier ones. */
  use(feature: MemoryFeature | FeatureFactory): this {
    const made =
      typeof feature === 'function'
        ? feature({
            stores: this.#options.stores,
            background: this.#background,
            model: this.#options.model,
            tokenizer: this.#options.tokenizer,
            clock: this.#options.clock,
          })
        : feature;
    if (this.#features.some((f) => f.name === made.name)) {
      throw new Error(`Feature "${made.name}" is already registered.`);
    }
    this.#features.push(made);
    return this;
  }

  /** HPD-Agent `.WithDynamicMemory()`: the `[DYNAMIC_MEMORY]` block and create/update/delete_memory. */
  withDynamicMemory(options: Without<DynamicMemoryOptions, 'store'> = {}): this {
    return this.use(({ stores }) => dynamicMemory({ ...options, store: stores.facts }));
  }

  /** HPD-Agent `.WithStaticMemory()`: knowledge documents, full text or chunks chosen by the message. */
  withStaticMemory(options: Without<StaticMemoryOptions, 'store'> = {}): this {
    return this.use(({ stores }) => staticMemory({ ...options, store: stores.documents }));
  }

  /** HPD-Agent `.WithPlanMode()`: the `[CURRENT_PLAN]` block and the five plan tools. */
  withPlanMode(options: Without<PlanModeOptions, 'store'> = {}): this {
    return this.use(({ stores }) => planMode({ ...options, store: stores.plans }));
  }

  /**
   * RockBot long-term recall alone (search per message, delta injection, first-turn fallback) and its
   * tools. When there is a model (the builder's, or `enrichment.model`), each memory save_memory saves is
   * expanded into well-formed entries in the background; `enrichment: false` turns that off.
   */
  withLongTermMemory(options: LongTermMemoryBuilderOptions = {}): this {
    const { enrichment, ...rest } = options;
    return this.use(({ stores, model, background, clock }) => {
      const enrichModel = enrichment === false ? undefined : (enrichment?.model ?? model);
      // A directive given here wins; otherwise the builder's memory-rules.md (read when a job runs).
      const given = enrichment === false ? undefined : enrichment?.directive;
      const directive =
        given ??
        (this.#options.directives
          ? async () => (await resolveDirectives(this.#options.directives)).memoryRules
          : undefined);
      return longTermMemory({
        ...rest,
        store: stores.facts,
        sessions: stores.sessions,
        ...(enrichModel
          ? {
              enrichment: {
                model: enrichModel,
                background,
                ...(directive !== undefined ? { directive } : {}),
                ...(clock ? { clock } : {}),
              },
            }
          : {}),
      });
    });
  }

  /**
   * Extraction after every turn (on the background queue: the reply never waits): the exchange's durable
   * facts, reconciled with the user's similar facts, applied as a kept, revertable changeset. Uses the
   * builder's `model` unless one is given.
   */
  withExtraction(options: ExtractionBuilderOptions = {}): this {
    return this.use(({ stores, model, background, clock }) => {
      const chosen = options.model ?? model;
      if (!chosen) {
        throw new ValidationError(
          'Extraction needs a model: give KiokuBuilder a `model`, or pass one to withExtraction().',
        );
      }
      return extraction({
        ...(clock ? { clock } : {}),
        ...options,
        model: chosen,
        stores,
        background,
      });
    });
  }

  /** RockBot working memory: own-namespace inventory, patrol findings and the four tools. */
  withWorkingMemory(options: Without<WorkingMemoryFeatureOptions, 'store'> = {}): this {
    return this.use(({ stores }) => workingMemory({ ...options, store: stores.working }));
  }

  /** The last N turns of the session replayed (default 20), never splitting a tool call from its result. */
  withConversationHistory(options: Without<ConversationHistoryOptions, 'sessions'> = {}): this {
    return this.use(({ stores }) => conversationHistory({ ...options, sessions: stores.sessions }));
  }

  /**
   * RockBot `.WithFeedback()`: the `record_feedback` tool, so the model keeps the user's corrections (and
   * what they liked or disliked) for the dream. Apps record feedback with `kioku.recordFeedback`.
   */
  withFeedback(options: Without<FeedbackFeatureOptions, 'sessions' | 'clock'> = {}): this {
    return this.use(({ stores, clock }) =>
      feedback({ ...options, sessions: stores.sessions, ...(clock ? { clock } : {}) }),
    );
  }

  /** Two-layer memory: large tool outputs go to the detail store behind `[MemoryRef: …]`. */
  withToolOutputOffload(options: Without<ToolOutputOffloadOptions, 'details'> = {}): this {
    return this.use(({ stores, tokenizer }) =>
      toolOutputOffload({ ...(tokenizer ? { tokenizer } : {}), ...options, details: stores.details }),
    );
  }

  /**
   * MemoryRef expansion: the parts of offloaded outputs whose placeholders are in the context (replayed
   * history, memory blocks) and match the new message, injected within the `memory-ref-expansion` share.
   * Register it after the features whose messages hold the placeholders.
   */
  withMemoryRefExpansion(options: Without<RefExpansionOptions, 'details'> = {}): this {
    return this.use(({ stores }) => memoryRefExpansion({ ...options, details: stores.details }));
  }

  /**
   * Agentflow's MemoryManager as a feature (auto retrieve / auto store) over the bundle's facts, and its
   * offloaded details unless `details: false`.
   */
  withMemoryManager(
    options: Without<MemoryManagerOptions, 'facts' | 'details'> & { details?: boolean } = {},
  ): this {
    const { details, ...rest } = options;
    return this.use(({ stores }) =>
      memoryManager({
        ...rest,
        facts: stores.facts,
        ...(details === false ? {} : { details: stores.details }),
      }),
    );
  }

  /**
   * RockBot `.WithMemory()`: long-term recall, working memory and conversation replay together, in the
   * order RockBot's context builder injects them.
   */
  withMemory(
    options: {
      recall?: LongTermMemoryBuilderOptions;
      working?: Without<WorkingMemoryFeatureOptions, 'store'>;
      history?: Without<ConversationHistoryOptions, 'sessions'>;
    } = {},
  ): this {
    return this.withLongTermMemory(options.recall)
      .withWorkingMemory(options.working)
      .withConversationHistory(options.history);
  }

  /**
   * A per-user cap on facts with an eviction policy (least recently used or least recalled) and optional
   * decay: past `maxFacts`, after a turn, the least valuable facts are removed in the background as a kept,
   * revertible changeset; the dream applies the limits too. Pinned facts (metadata `pinned: true`) stay.
   */
  withFactLimits(limits: FactLimitsWiring): this {
    const { keep, ...rest } = limits;
    parseOrThrow(FactLimitsSchema, rest, 'fact limits');
    this.#factLimits = limits;
    return this.use(({ stores, background, clock }) =>
      factLimits({
        limits: rest,
        facts: stores.facts,
        sessions: stores.sessions,
        background,
        ...(keep ? { keep } : {}),
        ...(clock ? { clock } : {}),
      }),
    );
  }

  build(): Kioku {
    return new Kioku(this.#options, this.#features, {
      background: this.#background,
      ...(this.#factLimits ? { factLimits: this.#factLimits } : {}),
    });
  }
}
