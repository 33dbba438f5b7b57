import type { Clock } from '../foundation/clock.js';
import type { BackgroundQueue, BackgroundQueueOptions } from '../memory/background/queue.js';
import type { DirectivesOption } from '../memory/dream/directives.js';
import type { EnrichmentOutbox } from '../memory/enrichment/outbox.js';
import type { ExtractionOutbox } from '../memory/extraction/outbox.js';
import type { FactLimits, KeepFact } from '../memory/limits/fact-limits.js';
import type { ChatModel } from '../model/chat-model.js';
import type { MemoryFeature } from '../runtime/feature.js';
import type { IntentClassifier, RecallMode } from '../runtime/intent/recall.js';
import type { TokenBudgetOptions } from '../runtime/token-budget.js';
import type { KiokuStores } from '../store/bundle/bundle.js';
import type { EmbeddingsOptions } from '../store/bundle/with-embeddings.js';
import type { Embedder } from '../store/embeddings/embedder.js';
import type { RecallSignalOptions } from '../store/recall/facts.js';
import type { TelemetryOptions } from '../telemetry/options.js';
import type { Telemetry } from '../telemetry/telemetry.js';
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
   * Recall's ranking signals over every fact search (on by default): the store's hits re-ranked by the
   * conversation around each hit, its session, the people and relations the query names, the time it
   * asks about and, for a request for a choice, the user's preferences. Options tune the weights;
   * `false` leaves the store's own ranking.
   */
  recallSignals?: RecallSignalOptions | false;
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
   * When recall (fact recall, relevant memory) searches memory: `always` (the default), `auto` (an intent
   * step decides per turn, skipping recall for a concrete message) or `never`. A turn can override it
   * (`conversation.run(message, model, { recall })`).
   */
  recall?: RecallMode;
  /** The intent step of `recall: 'auto'`: the deterministic classifier unless given (e.g. `modelIntentClassifier`). */
  intent?: IntentClassifier;
  tokenizer?: Tokenizer;
  clock?: Clock;
  /**
   * OpenTelemetry (see `TelemetryOptions`): by default spans and metrics go to the providers the app's
   * SDK registered before `KiokuBuilder` was made, and nothing is recorded (at no cost) without one.
   * Content (messages, memory text) is left out unless `captureContent`; user ids are hashed.
   */
  telemetry?: TelemetryOptions;
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
export interface KiokuWiring {
  background: BackgroundQueue;
  /** The extraction outbox, when extraction is on (`runPending` drains it). */
  outbox?: ExtractionOutbox;
  /** save_memory's enrichment outbox, when fact recall enriches (`runPending` drains it too). */
  enrichment?: EnrichmentOutbox;
  /** Drain what the outboxes have pending when the facade is made. */
  recover?: boolean;
  factLimits?: FactLimitsWiring;
  /** The spans and metrics of `KiokuOptions.telemetry`, when any is on. */
  telemetry?: Telemetry;
}

/** The current time as ISO text, by the configured clock. */
export function nowIso(clock: Clock | undefined): string {
  return new Date(clock?.now() ?? Date.now()).toISOString();
}
