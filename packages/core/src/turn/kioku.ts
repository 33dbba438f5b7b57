import type { TokenBudgetOptions } from '../budget/token-budget.js';
import type { Clock } from '../clock.js';
import { type ConversationHistoryOptions, conversationHistory } from '../features/conversation/index.js';
import { type DynamicMemoryOptions, dynamicMemory } from '../features/dynamic-memory/index.js';
import { type LongTermMemoryOptions, longTermMemory } from '../features/long-term-memory/index.js';
import { memoryManager } from '../features/memory-manager/index.js';
import { type ToolOutputOffloadOptions, toolOutputOffload } from '../features/offload/index.js';
import { type PlanModeOptions, planMode } from '../features/plan-mode/index.js';
import { type StaticMemoryOptions, staticMemory } from '../features/static-memory/index.js';
import { type WorkingMemoryFeatureOptions, workingMemory } from '../features/working-memory/index.js';
import { parseScope, type Scope } from '../scope.js';
import type { SessionCreateOptions } from '../sessions/record.js';
import type { SessionStore } from '../sessions/store.js';
import type { Tokenizer } from '../tokenizer.js';
import { Conversation } from './conversation.js';
import type { MemoryFeature } from './feature.js';

export interface KiokuOptions {
  /** Where conversations (session index, transcripts) live. */
  sessions: SessionStore;
  systemPrompt?: string;
  budget?: TokenBudgetOptions;
  tokenizer?: Tokenizer;
  clock?: Clock;
}

/** A configured memory stack: features in registration order, ready to start or resume conversations. */
export class Kioku {
  readonly features: readonly MemoryFeature[];
  readonly #options: KiokuOptions;

  constructor(options: KiokuOptions, features: readonly MemoryFeature[]) {
    this.#options = options;
    this.features = Object.freeze([...features]);
  }

  /** A new session for the user (and agent), and its conversation. */
  async startConversation(
    scope: Omit<Scope, 'threadId'>,
    session?: SessionCreateOptions,
  ): Promise<Conversation> {
    const s = parseScope(scope);
    const info = await this.#options.sessions.create({ userId: s.userId, agentId: s.agentId }, session);
    return this.#conversation({ userId: s.userId, agentId: s.agentId, threadId: info.id });
  }

  /** An existing session's conversation. NotFoundError when the session is not the user's. */
  async resumeConversation(scope: Omit<Scope, 'threadId'>, sessionId: string): Promise<Conversation> {
    const s = parseScope(scope);
    const info = await this.#options.sessions.load({ userId: s.userId, agentId: s.agentId }, sessionId);
    return this.#conversation({ userId: s.userId, agentId: s.agentId, threadId: info.id });
  }

  #conversation(scope: Scope & { threadId: string }): Conversation {
    const { sessions, systemPrompt, budget, tokenizer, clock } = this.#options;
    return new Conversation({
      scope,
      sessions,
      features: this.features,
      ...(systemPrompt === undefined ? {} : { systemPrompt }),
      ...(budget === undefined ? {} : { budget }),
      ...(tokenizer === undefined ? {} : { tokenizer }),
      ...(clock === undefined ? {} : { clock }),
    });
  }
}

/** Wires features the way the seeds' builders do; `with*` helpers for each seed feature call `use`. */
export class KiokuBuilder {
  readonly #options: KiokuOptions;
  readonly #features: MemoryFeature[] = [];

  constructor(options: KiokuOptions) {
    this.#options = options;
  }

  /** Register a feature; its middleware runs after those registered before it. */
  use(feature: MemoryFeature): this {
    if (this.#features.some((f) => f.name === feature.name)) {
      throw new Error(`Feature "${feature.name}" is already registered.`);
    }
    this.#features.push(feature);
    return this;
  }

  /** HPD-Agent `.WithDynamicMemory()`: the `[DYNAMIC_MEMORY]` block and create/update/delete_memory. */
  withDynamicMemory(options: DynamicMemoryOptions): this {
    return this.use(dynamicMemory(options));
  }

  /** HPD-Agent `.WithStaticMemory()`: knowledge documents, full text or chunks chosen by the message. */
  withStaticMemory(options: StaticMemoryOptions): this {
    return this.use(staticMemory(options));
  }

  /** HPD-Agent `.WithPlanMode()`: the `[CURRENT_PLAN]` block and the five plan tools. */
  withPlanMode(options: PlanModeOptions): this {
    return this.use(planMode(options));
  }

  /** RockBot long-term recall alone (search per message, delta injection, first-turn fallback). */
  withLongTermMemory(
    options: Omit<LongTermMemoryOptions, 'sessions'> & { sessions?: LongTermMemoryOptions['sessions'] },
  ): this {
    return this.use(longTermMemory({ sessions: this.#options.sessions, ...options }));
  }

  /** RockBot working memory: own-namespace inventory, patrol findings and the four tools. */
  withWorkingMemory(options: WorkingMemoryFeatureOptions): this {
    return this.use(workingMemory(options));
  }

  /** The last N turns of the session replayed (default 20), never splitting a tool call from its result. */
  withConversationHistory(options: Partial<ConversationHistoryOptions> = {}): this {
    return this.use(conversationHistory({ sessions: this.#options.sessions, ...options }));
  }

  /** Two-layer memory: large tool outputs go to the detail store behind `[MemoryRef: …]`. */
  withToolOutputOffload(options: ToolOutputOffloadOptions): this {
    return this.use(toolOutputOffload(options));
  }

  /** Agentflow's MemoryManager as a feature (auto retrieve / auto store). */
  withMemoryManager(...args: Parameters<typeof memoryManager>): this {
    return this.use(memoryManager(...args));
  }

  /**
   * RockBot `.WithMemory()`: long-term recall, working memory and conversation replay together, in the
   * order RockBot's context builder injects them.
   */
  withMemory(options: {
    facts: LongTermMemoryOptions['store'];
    working: WorkingMemoryFeatureOptions['store'];
    recall?: Omit<LongTermMemoryOptions, 'store' | 'sessions'>;
    workingOptions?: Omit<WorkingMemoryFeatureOptions, 'store'>;
    history?: Omit<ConversationHistoryOptions, 'sessions'>;
  }): this {
    return this.withLongTermMemory({ store: options.facts, ...options.recall })
      .withWorkingMemory({ store: options.working, ...options.workingOptions })
      .withConversationHistory(options.history);
  }

  build(): Kioku {
    return new Kioku(this.#options, this.#features);
  }
}
