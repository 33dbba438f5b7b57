import { NotFoundError, ValidationError } from '../foundation/errors.js';
import { parseScope, type Scope } from '../foundation/scope.js';
import type { BackgroundQueue } from '../memory/background/queue.js';
import { ChangesetLog } from '../memory/changesets/changeset-log.js';
import type { ExtractionOutbox } from '../memory/extraction/outbox.js';
import {
  type RunPendingOptions,
  type RunPendingReport,
  runPending,
} from '../memory/extraction/run-pending.js';
import { observeWorkerBatch } from '../memory/extraction/worker-telemetry.js';
import { type FeedbackInput, FeedbackLog } from '../memory/feedback/feedback-log.js';
import type { FeedbackSignal } from '../memory/feedback/signal.js';
import { MEMORY_NOTICE } from '../memory/trust/fence.js';
import { Conversation, type ConversationOptions } from '../runtime/conversation.js';
import type { MemoryFeature } from '../runtime/feature.js';
import type { KiokuStores } from '../store/bundle/bundle.js';
import type { SessionCreateOptions } from '../store/sessions/record.js';
import { type Telemetry, withTelemetry } from '../telemetry/telemetry.js';
import type { KiokuOptions, KiokuWiring } from './options.js';
import { MemoryPasses } from './passes.js';
import { PendingWork } from './pending-work.js';
import { Privacy } from './privacy.js';
import { QuarantineReview } from './quarantine.js';

/**
 * A configured memory stack: features in registration order, ready to start or resume conversations.
 * Besides conversations it has one object per job: `passes` (the dream, knowledge, fact limits and the
 * changesets they keep), `privacy` (forgetting) and `quarantine` (the user's review of flagged memories).
 */
export class Kioku {
  readonly features: readonly MemoryFeature[];
  /** The stores every feature reads and writes (with embeddings, when configured). */
  readonly stores: KiokuStores;
  /** Where background memory work runs (extraction, enrichment). */
  readonly background: BackgroundQueue;
  readonly passes: MemoryPasses;
  readonly privacy: Privacy;
  readonly quarantine: QuarantineReview;
  readonly #options: KiokuOptions;
  readonly #feedback: FeedbackLog;
  readonly #outbox: ExtractionOutbox | undefined;
  /** Every outbox `runPending` drains (extraction, save_memory's enrichment); undefined with neither. */
  readonly #pending: PendingWork | undefined;
  /** Work a process that died left in the store, picked up at start (see `withExtraction`'s `recover`). */
  readonly #recovery: Promise<unknown> | undefined;
  readonly #stopRecovery = new AbortController();
  readonly #telemetry: Telemetry | undefined;

  constructor(options: KiokuOptions, features: readonly MemoryFeature[], wiring: KiokuWiring) {
    const { stores, clock } = options;
    this.#options = options;
    this.stores = stores;
    this.features = Object.freeze([...features]);
    this.background = wiring.background;
    this.#telemetry = wiring.telemetry;
    this.#feedback = new FeedbackLog(stores.sessions, clock ? { clock } : {});
    this.passes = new MemoryPasses({
      stores,
      options,
      changesets: new ChangesetLog(stores.sessions),
      feedback: this.#feedback,
      factLimits: wiring.factLimits,
      telemetry: wiring.telemetry,
    });
    this.privacy = new Privacy(stores, {
      clock,
      beforeForget: () => this.flush(),
      telemetry: wiring.telemetry,
    });
    this.quarantine = new QuarantineReview(stores.facts, clock);
    this.#outbox = wiring.outbox;
    this.#pending =
      wiring.outbox || wiring.enrichment
        ? new PendingWork(stores.sessions, { extraction: wiring.outbox, enrichment: wiring.enrichment })
        : undefined;
    // Swallowed: a store that is down at start leaves the work pending for the next run.
    this.#recovery = wiring.recover
      ? this.runPending({ stop: this.#stopRecovery.signal }).catch(() => undefined)
      : undefined;
  }

  /**
   * Resolves when the background work so far (extractions, enrichments) has finished: sessions whose new
   * turns wait for their trigger are extracted now.
   */
  async flush(): Promise<void> {
    await this.#recovery;
    await this.background.flush();
  }

  /**
   * Do the background work the store holds now — extract the sessions' pending turns, enrich the memories
   * save_memory saved — in this process (for an app's own cron or queue, a
   * serverless function after its response, or at start): user by user, each under the user's lease, so
   * any number of instances can call it at once and a user another instance is working on is skipped as
   * `busy`. `users` limits it to those users (every session of theirs is checked); by default every user
   * the pending index lists is done. `budget` bounds the passes or the time. `kioku worker` runs it in a loop.
   */
  runPending(options: RunPendingOptions = {}): Promise<RunPendingReport> {
    const pending = this.#pending;
    if (!pending) {
      return Promise.reject(
        new ValidationError(
          "runPending has no work to do: build Kioku with withExtraction(), or withFacts({ mode: 'recall' }) and a model (save_memory's enrichment).",
        ),
      );
    }
    const { clock } = this.#options;
    const run = () => runPending(pending, this.stores.working, { ...(clock ? { clock } : {}), ...options });
    const telemetry = this.#telemetry;
    if (!telemetry) return run();
    const now = () => clock?.now() ?? Date.now();
    return withTelemetry(telemetry, () =>
      observeWorkerBatch(telemetry, this.#outbox, this.stores.sessions, now, run),
    );
  }

  /**
   * Take no more background work and wait for what is queued (sessions whose new turns wait for their
   * trigger are extracted first); with `signal`, stop waiting when it aborts (running jobs see it abort).
   * The stores stay open: they are the app's to close.
   */
  async close(options: { signal?: AbortSignal } = {}): Promise<void> {
    this.#stopRecovery.abort(); // the pass under way finishes; the rest stays pending for the next start
    await this.#recovery;
    await this.background.close(options);
  }

  /** A new session for the user (and agent), and its conversation. */
  async startConversation(
    scope: Omit<Scope, 'threadId'>,
    session?: SessionCreateOptions,
  ): Promise<Conversation> {
    const s = parseScope(scope);
    const info = await this.stores.sessions.create({ userId: s.userId, agentId: s.agentId }, session);
    return this.#conversation(
      { userId: s.userId, agentId: s.agentId, threadId: info.id },
      { newSession: true },
    );
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
   * Record feedback for the scope's user (and agent): a correction, or what they liked or disliked (a
   * thumbs-down button, say). The dream's consolidation reads the last 7 days of it.
   */
  recordFeedback(scope: Omit<Scope, 'threadId'>, signal: FeedbackInput): Promise<FeedbackSignal> {
    return this.#feedback.record(scope, signal);
  }

  /** The app's system prompt, and `MEMORY_NOTICE` when a feature puts memory blocks in the prompt. */
  #systemPrompt(): string | undefined {
    const { systemPrompt } = this.#options;
    if (!this.features.some((f) => f.middleware?.placement === 'system')) return systemPrompt;
    return systemPrompt ? `${systemPrompt}\n\n${MEMORY_NOTICE}` : MEMORY_NOTICE;
  }

  #conversation(
    scope: Scope & { threadId: string },
    options: Pick<ConversationOptions, 'newSession'> = {},
  ): Conversation {
    const { budget, tokenizer, clock, recall, intent } = this.#options;
    const systemPrompt = this.#systemPrompt();
    return new Conversation({
      ...options,
      scope,
      sessions: this.stores.sessions,
      features: this.features,
      ...(systemPrompt === undefined ? {} : { systemPrompt }),
      ...(budget === undefined ? {} : { budget }),
      ...(tokenizer === undefined ? {} : { tokenizer }),
      ...(clock === undefined ? {} : { clock }),
      ...(recall === undefined ? {} : { recall }),
      ...(intent === undefined ? {} : { intent }),
      telemetry: this.#telemetry,
    });
  }
}
