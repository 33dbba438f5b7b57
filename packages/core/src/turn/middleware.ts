import type { Clock } from '../clock.js';
import type { Scope } from '../scope.js';
import type { Tokenizer } from '../tokenizer.js';
import type { ChatMessage } from './messages.js';

/** Why an item a middleware could have injected was left out. */
export type DropReason =
  /** It did not fit in the tokens the middleware was given. */
  | 'budget'
  /** Already injected earlier in this session (delta injection). */
  | 'already-injected'
  /** Over the middleware's own item limit (e.g. max 8 recalled entries, last 20 turns). */
  | 'limit'
  /** Below a relevance threshold. */
  | 'irrelevant'
  /** Expired before it could be shown. */
  | 'expired'
  /** Kept in a shorter form to fit (an old tool result cut to its MemoryRef or first lines); `tokens` saved. */
  | 'shrunk';

export interface DroppedItem {
  /** Record id, key or turn index — whatever names the item. */
  id: string;
  reason: DropReason;
  /** Tokens it would have taken, when known. */
  tokens?: number;
  /**
   * When set, this entry stands for that many items left out together without being read one by one
   * (e.g. dynamic memory's older facts once its block is full); `id` names the group.
   */
  count?: number;
}

/** What a middleware sees for one turn. */
export interface MiddlewareContext {
  scope: Readonly<Scope>;
  /** The session this turn belongs to (also the scope's `threadId`). */
  sessionId: string;
  userMessage: string;
  /** 0 on the first turn of the session. */
  turnIndex: number;
  /** The most tokens this middleware's messages may take (counted with `countMessageTokens`). */
  maxTokens: number;
  tokenizer: Tokenizer;
  clock: Clock;
  signal?: AbortSignal;
  /**
   * Facts the middlewares before this one put into this turn's prompt (`MiddlewareResult.injectedFactIds`),
   * so a later feature over the same fact store does not inject the same fact twice.
   */
  injectedFactIds: ReadonlySet<string>;
}

/** Where injected messages go: memory blocks after the system prompt, replayed turns before the user message. */
export type Placement = 'system' | 'history';

export interface MiddlewareResult {
  messages: ChatMessage[];
  /** Items included (facts, chunks, turns, keys …). */
  included: number;
  dropped: DroppedItem[];
  /** Ids of the facts among the included items (see `MiddlewareContext.injectedFactIds`). */
  injectedFactIds?: readonly string[];
}

/**
 * One memory feature's contribution to the prompt (HPD-Agent's prompt filters, RockBot's context
 * builder steps). Middlewares run in registration order; each gets what is left of the budget, capped by
 * its own share.
 */
export interface PromptMiddleware {
  /** Names the feature in the ledger, e.g. `dynamic-memory`. */
  readonly name: string;
  readonly placement: Placement;
  inject(context: MiddlewareContext): Promise<MiddlewareResult>;
  /** Called after a turn was recorded, e.g. to mark recalled entries as injected or store the exchange. */
  afterTurn?(context: AfterTurnContext): Promise<void>;
}

export interface AfterTurnContext {
  scope: Readonly<Scope>;
  sessionId: string;
  turnIndex: number;
  /** Everything the turn added to the transcript: user message, assistant and tool messages. */
  messages: readonly ChatMessage[];
}

export const EMPTY_RESULT: MiddlewareResult = Object.freeze({ messages: [], included: 0, dropped: [] });
