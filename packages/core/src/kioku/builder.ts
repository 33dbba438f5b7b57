import { ValidationError } from '../foundation/errors.js';
import { checkOptions, OptionError } from '../foundation/options.js';
import { parseOrThrow } from '../foundation/validation.js';
import { memoryWorkGuard } from '../memory/background/memory-lease.js';
import { BackgroundQueue } from '../memory/background/queue.js';
import { resolveDirectives } from '../memory/dream/directives.js';
import { EnrichmentOutbox } from '../memory/enrichment/outbox.js';
import { extraction } from '../memory/extraction/feature.js';
import { ExtractionOutbox } from '../memory/extraction/outbox.js';
import { factMemory } from '../memory/facts/feature.js';
import { type FeedbackFeatureOptions, feedback } from '../memory/feedback/feature.js';
import { type ConversationHistoryOptions, conversationHistory } from '../memory/history/feature.js';
import { type KnowledgeDocumentsOptions, knowledgeDocuments } from '../memory/knowledge/feature.js';
import { FactLimitsSchema } from '../memory/limits/fact-limits.js';
import { factLimits } from '../memory/limits/feature.js';
import { memoryRefExpansion, type RefExpansionOptions } from '../memory/offload/expansion.js';
import { type ToolOutputOffloadOptions, toolOutputOffload } from '../memory/offload/feature.js';
import { type PlanModeOptions, planMode } from '../memory/plans/feature.js';
import { type WorkingMemoryFeatureOptions, workingMemory } from '../memory/working/feature.js';
import type { MemoryFeature } from '../runtime/feature.js';
import type { KiokuStores } from '../store/bundle/bundle.js';
import { withAbortSignal } from '../store/bundle/with-abort-signal.js';
import { withEmbeddings } from '../store/bundle/with-embeddings.js';
import { withBundleRecallSignals } from '../store/bundle/with-recall-signals.js';
import { withStoreTelemetry } from '../store/bundle/with-telemetry.js';
import { Telemetry, withTelemetry } from '../telemetry/telemetry.js';
import {
  EXTRACTION_OPTIONS,
  type ExtractionBuilderOptions,
  FACT_LIMITS_OPTIONS,
  FACT_MODES,
  FACTS_OPTIONS,
  type FactRecallBuilderOptions,
  type FactsBuilderOptions,
  FEEDBACK_OPTIONS,
  HISTORY_OPTIONS,
  KIOKU_OPTIONS,
  KNOWLEDGE_OPTIONS,
  MEMORY_OPTIONS,
  OFFLOAD_OPTIONS,
  PLAN_MODE_OPTIONS,
  REF_EXPANSION_OPTIONS,
  type Without,
  WORKING_MEMORY_OPTIONS,
} from './builder-options.js';
import { Kioku } from './kioku.js';
import type { FactLimitsWiring, FeatureFactory, KiokuOptions } from './options.js';

export type { ExtractionBuilderOptions, FactRecallBuilderOptions, FactsBuilderOptions };

/**
 * The one wiring point: the stores bundle (and embeddings, budget, model) go in once; each `with*` adds
 * a feature with only its own options and hands it the store it needs.
 */
export class KiokuBuilder {
  readonly #options: KiokuOptions;
  readonly #features: MemoryFeature[] = [];
  readonly #background: BackgroundQueue;
  #outbox: ExtractionOutbox | undefined;
  #recover: boolean | undefined;
  #enrichment: EnrichmentOutbox | undefined;
  #factLimits: FactLimitsWiring | undefined;
  readonly #telemetry: Telemetry | undefined;
  readonly #factModes = new Set<string>();

  /** Options are checked here (unknown keys, modes, the budget), before anything is wired: see OptionError. */
  constructor(options: KiokuOptions) {
    checkOptions('KiokuBuilder', options, KIOKU_OPTIONS);
    const { embeddings, recallSignals } = options;
    const telemetry = Telemetry.from(options.telemetry);
    this.#telemetry = telemetry;
    // Store spans sit right over the app's bundle: one span is one call to its adapter.
    const traced = withAbortSignal(
      telemetry ? withStoreTelemetry(options.stores, telemetry) : options.stores,
    );
    const signalled =
      recallSignals === false
        ? traced
        : withBundleRecallSignals(traced, {
            ...(options.clock ? { clock: options.clock } : {}),
            ...recallSignals,
          });
    const stores =
      embeddings === undefined
        ? signalled
        : withEmbeddings(signalled, 'embed' in embeddings ? { embedder: embeddings } : embeddings);
    this.#options = { ...options, stores };
    // By default each background job holds the user's memory-work lease, so several app instances over
    // one database can all run background work (an app's own guard replaces it).
    const clock = options.clock ? { clock: options.clock } : {};
    const guard = options.background?.guard ?? memoryWorkGuard(stores.working, clock);
    this.#background = new BackgroundQueue({
      ...options.background,
      // A job's passes are spans of a trace of their own (not of the turn that queued them).
      guard: telemetry
        ? (scope, run) => withTelemetry(telemetry, () => telemetry.detached(() => guard(scope, run)))
        : guard,
    });
  }

  /** The stores features get (the bundle, with recall's signals and, when configured, embeddings). */
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

  /**
   * The user's facts in the prompt, in one mode (see `FactMode`): `all` (the default: every fact, with the
   * tools that edit them), `recall` (the facts each message finds, once per session, with save_memory and
   * search_memory; each saved memory is enriched in the background when there is a model, unless
   * `enrichment: false`) or `relevant` (facts and offloaded details above a relevance threshold, each
   * exchange stored after the turn; `details: false` leaves the details out). Call it once per mode.
   */
  withFacts(options: FactsBuilderOptions = {}): this {
    const mode = options.mode ?? 'all';
    checkOptions('withFacts', { mode }, { mode: FACT_MODES });
    checkOptions(`withFacts (mode '${mode}')`, options, FACTS_OPTIONS[mode]);
    if (this.#factModes.has(mode)) {
      throw new OptionError(
        'withFacts',
        'mode',
        `'${mode}' is already installed (modes combine, e.g. 'all' and 'recall', but each one once)`,
      );
    }
    this.#factModes.add(mode);
    if (options.mode === 'recall') return this.#withFactRecall(options);
    if (options.mode === 'relevant') {
      const { details, ...rest } = options;
      return this.use(({ stores }) =>
        factMemory({
          ...rest,
          facts: stores.facts,
          ...(details === false ? {} : { details: stores.details }),
        }),
      );
    }
    return this.use(({ stores }) => factMemory({ ...options, facts: stores.facts }));
  }

  /** Knowledge documents in the prompt: their full text, or the chunks the message finds. */
  withKnowledge(options: Without<KnowledgeDocumentsOptions, 'store'> = {}): this {
    checkOptions('withKnowledge', options, KNOWLEDGE_OPTIONS);
    return this.use(({ stores }) => knowledgeDocuments({ ...options, store: stores.documents }));
  }

  /** The thread's plan: the `[CURRENT_PLAN]` block and the five plan tools. */
  withPlanMode(options: Without<PlanModeOptions, 'store'> = {}): this {
    checkOptions('withPlanMode', options, PLAN_MODE_OPTIONS);
    return this.use(({ stores }) => planMode({ ...options, store: stores.plans }));
  }

  #withFactRecall(options: { mode: 'recall' } & FactRecallBuilderOptions): this {
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
      // One outbox per builder, shared with Kioku.runPending: the requests of every save are drained there.
      if (enrichModel && !this.#enrichment) {
        this.#enrichment = new EnrichmentOutbox({
          stores: { facts: stores.facts, sessions: stores.sessions },
          model: enrichModel,
          dedup: rest.dedup ?? true,
          ...(directive !== undefined ? { directive } : {}),
          ...(clock ? { clock } : {}),
        });
      }
      const outbox = enrichModel ? this.#enrichment : undefined;
      return factMemory({
        ...rest,
        facts: stores.facts,
        sessions: stores.sessions,
        ...(enrichModel && outbox
          ? {
              enrichment: {
                model: enrichModel,
                background,
                outbox,
                ...(directive !== undefined ? { directive } : {}),
                ...(clock ? { clock } : {}),
              },
            }
          : {}),
      });
    });
  }

  /**
   * Extraction of the conversation's durable facts, after the reply (the reply never waits), once a
   * session has a few new turns (`trigger`), on `flush()`, or by `runPending` in any instance: reconciled
   * with the user's similar facts, applied as kept, revertable changesets. Uses the builder's `model`
   * unless one is given.
   */
  withExtraction(options: ExtractionBuilderOptions = {}): this {
    checkOptions('withExtraction', options, EXTRACTION_OPTIONS);
    return this.use(({ stores, model, background, clock, tokenizer }) => {
      const chosen = options.model ?? model;
      if (!chosen) {
        throw new ValidationError(
          'Extraction needs a model: give KiokuBuilder a `model`, or pass one to withExtraction().',
        );
      }
      const { trigger, recover = true, ...rest } = options;
      this.#recover = recover;
      const outbox = new ExtractionOutbox({ ...(clock ? { clock } : {}), ...rest, model: chosen, stores });
      this.#outbox = outbox;
      return extraction({
        ...(clock ? { clock } : {}),
        ...rest,
        ...(trigger ? { trigger } : {}),
        ...(tokenizer ? { tokenizer } : {}),
        model: chosen,
        stores,
        background,
        outbox,
      });
    });
  }

  /** Working memory: the own namespace's inventory, patrol findings and the four tools. */
  withWorkingMemory(options: Without<WorkingMemoryFeatureOptions, 'store'> = {}): this {
    checkOptions('withWorkingMemory', options, WORKING_MEMORY_OPTIONS);
    return this.use(({ stores }) => workingMemory({ ...options, store: stores.working }));
  }

  /** The last N turns of the session replayed (default 20), never splitting a tool call from its result. */
  withConversationHistory(options: Without<ConversationHistoryOptions, 'sessions'> = {}): this {
    checkOptions('withConversationHistory', options, HISTORY_OPTIONS);
    return this.use(({ stores }) => conversationHistory({ ...options, sessions: stores.sessions }));
  }

  /**
   * The `record_feedback` tool, so the model keeps the user's corrections (and
   * what they liked or disliked) for the dream. Apps record feedback with `kioku.recordFeedback`.
   */
  withFeedback(options: Without<FeedbackFeatureOptions, 'sessions' | 'clock'> = {}): this {
    checkOptions('withFeedback', options, FEEDBACK_OPTIONS);
    return this.use(({ stores, clock }) =>
      feedback({ ...options, sessions: stores.sessions, ...(clock ? { clock } : {}) }),
    );
  }

  /** Two-layer memory: large tool outputs go to the detail store behind `[MemoryRef: …]`. */
  withToolOutputOffload(options: Without<ToolOutputOffloadOptions, 'details'> = {}): this {
    checkOptions('withToolOutputOffload', options, OFFLOAD_OPTIONS);
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
    checkOptions('withMemoryRefExpansion', options, REF_EXPANSION_OPTIONS);
    return this.use(({ stores }) => memoryRefExpansion({ ...options, details: stores.details }));
  }

  /**
   * Fact recall, working memory and conversation replay together, in that order.
   */
  withMemory(
    options: {
      recall?: FactRecallBuilderOptions;
      working?: Without<WorkingMemoryFeatureOptions, 'store'>;
      history?: Without<ConversationHistoryOptions, 'sessions'>;
    } = {},
  ): this {
    checkOptions('withMemory', options, MEMORY_OPTIONS);
    return this.withFacts({ ...options.recall, mode: 'recall' })
      .withWorkingMemory(options.working)
      .withConversationHistory(options.history);
  }

  /**
   * A per-user cap on facts with an eviction policy (least recently used or least recalled) and optional
   * decay: past `maxFacts`, after a turn, the least valuable facts are removed in the background as a kept,
   * revertible changeset; the dream applies the limits too. Pinned facts (metadata `pinned: true`) stay.
   */
  withFactLimits(limits: FactLimitsWiring): this {
    checkOptions('withFactLimits', limits, FACT_LIMITS_OPTIONS);
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
      ...(this.#outbox ? { outbox: this.#outbox } : {}),
      ...(this.#enrichment ? { enrichment: this.#enrichment } : {}),
      // withExtraction's `recover` decides; enrichment alone recovers (its requests wait in the store).
      ...(this.#outbox || this.#enrichment ? { recover: this.#recover ?? true } : {}),
      ...(this.#factLimits ? { factLimits: this.#factLimits } : {}),
      ...(this.#telemetry ? { telemetry: this.#telemetry } : {}),
    });
  }
}
