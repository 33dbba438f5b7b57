import type { TokenBudgetOptions } from '../budget/token-budget.js';
import type { Clock } from '../clock.js';
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

  build(): Kioku {
    return new Kioku(this.#options, this.#features);
  }
}
