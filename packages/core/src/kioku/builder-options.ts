import type { OptionSpec, OptionSpecOf } from '../foundation/options.js';
import type { BackgroundQueueOptions } from '../memory/background/queue.js';
import type { ExtractionFeatureOptions } from '../memory/extraction/feature.js';
import type { AllFactsOptions } from '../memory/facts/all/feature.js';
import type { FactRecallOptions } from '../memory/facts/recall/feature.js';
import type { RelevantMemoryOptions } from '../memory/facts/relevant/manager.js';
import type { ConversationHistoryOptions } from '../memory/history/feature.js';
import type { KnowledgeDocumentsOptions } from '../memory/knowledge/feature.js';
import { FactLimitsSchema } from '../memory/limits/fact-limits.js';
import type { RefExpansionOptions } from '../memory/offload/expansion.js';
import type { ToolOutputOffloadOptions } from '../memory/offload/feature.js';
import type { WorkingMemoryFeatureOptions } from '../memory/working/feature.js';
import type { ChatModel } from '../model/chat-model.js';
import { RECALL_MODES } from '../runtime/intent/recall.js';
import { type TokenBudgetOptions, TokenBudgetSchema } from '../runtime/token-budget.js';
import { TELEMETRY_OPTIONS } from '../telemetry/options.js';
import type { FactLimitsWiring, KiokuOptions } from './options.js';

/**
 * What each KiokuBuilder call accepts, key by key, for `checkOptions`: a key not listed is refused with
 * the nearest listed one. Each spec is checked against its options type (`OptionSpecOf`), so an option
 * added to a type and not here fails to compile. Values the features validate themselves (zod schemas
 * when they are made) are `true` here; the builder makes the features when each `with…` is called.
 */

export type Without<T, K extends keyof T> = Omit<T, K>;

/** `withFacts({ mode: 'recall' })`'s options: enrichment uses the builder's model and queue unless told otherwise. */
export type FactRecallBuilderOptions = Without<FactRecallOptions, 'store' | 'sessions' | 'enrichment'> & {
  /** Default: on when there is a model. `false` turns it off. */
  enrichment?: false | { model?: ChatModel; directive?: string };
};

/** `withFacts`'s options: one mode's (see `FactMode`); the builder hands the stores. */
export type FactsBuilderOptions =
  | ({ mode?: 'all' } & Without<AllFactsOptions, 'store'>)
  | ({ mode: 'recall' } & FactRecallBuilderOptions)
  | ({ mode: 'relevant' } & Without<RelevantMemoryOptions, 'facts' | 'details'> & {
        /** Search offloaded details too (default true). */
        details?: boolean;
      });

/** `withExtraction`'s options: the builder's stores, queue and (unless given) model. */
export type ExtractionBuilderOptions = Without<
  ExtractionFeatureOptions,
  'stores' | 'background' | 'model' | 'outbox' | 'tokenizer'
> & {
  model?: ChatModel;
  /**
   * Extract, when the app starts (the facade is built), what a process that died left pending (default
   * true); users another instance is working on are skipped. `false` leaves it to `runPending` or a worker.
   */
  recover?: boolean;
};

const BUDGET = {
  maxTokens: TokenBudgetSchema.shape.maxTokens,
  shares: TokenBudgetSchema.shape.shares,
} satisfies OptionSpecOf<TokenBudgetOptions>;

const BACKGROUND = {
  maxPending: true,
  onEvent: true,
  guard: true,
} satisfies OptionSpecOf<BackgroundQueueOptions>;

export const KIOKU_OPTIONS = {
  stores: true,
  embeddings: true,
  recallSignals: true,
  model: true,
  directives: true,
  background: { options: BACKGROUND },
  systemPrompt: true,
  budget: { options: BUDGET },
  recall: RECALL_MODES,
  intent: true,
  tokenizer: true,
  clock: true,
  telemetry: { options: TELEMETRY_OPTIONS },
} satisfies OptionSpecOf<KiokuOptions>;

export const FACT_MODES = ['all', 'recall', 'relevant'] as const;

const ALL_FACTS = {
  maxTokens: true,
  dedup: true,
  showIds: true,
  tools: true,
} satisfies OptionSpecOf<Omit<AllFactsOptions, 'store'>>;

const FACT_RECALL = {
  enrichment: true,
  maxTokens: true,
  dedup: true,
  maxResults: true,
  fallbackResults: true,
} satisfies OptionSpecOf<FactRecallBuilderOptions>;

const RELEVANT_FACTS = {
  autoRetrieve: true,
  autoStore: true,
  relevanceThreshold: true,
  maxMemories: true,
  interactionCategory: true,
} satisfies OptionSpecOf<Omit<RelevantMemoryOptions, 'facts' | 'details'>>;

/** `withFacts` options by mode, `mode` included (`details` is the builder's, in mode `relevant`). */
export const FACTS_OPTIONS: Readonly<Record<(typeof FACT_MODES)[number], OptionSpec>> = {
  all: { mode: FACT_MODES, ...ALL_FACTS },
  recall: { mode: FACT_MODES, ...FACT_RECALL },
  relevant: { mode: FACT_MODES, details: [true, false], ...RELEVANT_FACTS },
};

export const KNOWLEDGE_OPTIONS = {
  maxTokens: true,
  strategy: ['full-text', 'indexed'],
  topK: true,
  owner: true,
} satisfies OptionSpecOf<Omit<KnowledgeDocumentsOptions, 'store'>>;

export const PLAN_MODE_OPTIONS: OptionSpec = {};

export const FEEDBACK_OPTIONS: OptionSpec = {};

export const EXTRACTION_OPTIONS = {
  model: true,
  clock: true,
  usage: true,
  maxFacts: true,
  directive: true,
  reconcileDirective: true,
  dedup: true,
  turnsPerPass: true,
  maxAttempts: true,
  trigger: true,
  recover: [true, false],
} satisfies OptionSpecOf<ExtractionBuilderOptions>;

export const WORKING_MEMORY_OPTIONS = {
  clock: true,
  namespace: true,
  tools: true,
  isUserSession: true,
  patrolPrefix: true,
  maxListed: true,
  searchLimit: true,
  previewChars: true,
} satisfies OptionSpecOf<Omit<WorkingMemoryFeatureOptions, 'store'>>;

export const HISTORY_OPTIONS = {
  maxTurns: true,
  maxEntries: true,
} satisfies OptionSpecOf<Omit<ConversationHistoryOptions, 'sessions'>>;

export const OFFLOAD_OPTIONS = {
  tokenizer: true,
  thresholdTokens: true,
  summaryTokens: true,
  summaryTimeoutMs: true,
  summarize: true,
  summaryModel: true,
} satisfies OptionSpecOf<Omit<ToolOutputOffloadOptions, 'details'>>;

export const REF_EXPANSION_OPTIONS = {
  model: true,
  maxTokens: true,
  chunkTokens: true,
  maxRefs: true,
  minRelevance: true,
  timeoutMs: true,
} satisfies OptionSpecOf<Omit<RefExpansionOptions, 'details'>>;

export const MEMORY_OPTIONS: OptionSpec = {
  recall: { options: FACT_RECALL },
  working: { options: WORKING_MEMORY_OPTIONS },
  history: { options: HISTORY_OPTIONS },
};

export const FACT_LIMITS_OPTIONS = {
  maxFacts: FactLimitsSchema.shape.maxFacts,
  policy: ['least-recently-used', 'least-recalled'],
  forgetUnusedAfterDays: FactLimitsSchema.shape.forgetUnusedAfterDays,
  keep: true,
} satisfies OptionSpecOf<FactLimitsWiring>;
