import type { Clock } from '../foundation/clock.js';
import type { Scope } from '../foundation/scope.js';
import type { ChatMessage } from '../model/messages.js';
import type { SeenRecord } from '../model/seen-versions.js';
import type { Tokenizer } from '../tokens/tokenizer.js';
import type { RecallDecision } from './intent/recall.js';

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
  | 'shrunk'
  /** Quarantined: it reads like instructions and waits for the user's confirmation (`trust/quarantine.ts`). */
  | 'quarantined'
  /** Recall did not run: the turn's recall decision (`TurnLedger.recall`) found memory not needed. */
  | 'not-needed';

export interface DroppedItem {
  /** Record id, key or turn index — whatever names the item. */
  id: string;
  reason: DropReason;
  /** Tokens it would have taken, when known. */
  tokens?: number;
  /**
   * When set, this entry stands for that many items left out together without being read one by one
   * (e.g. the fact block's older facts once it is full); `id` names the group.
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
   * Facts the middlewares before this one put into this turn's prompt (`MiddlewareResult.injectedFacts`),
   * so a later feature over the same fact store does not inject the same fact twice.
   */
  injectedFactIds: ReadonlySet<string>;
  /** The turn's recall decision, made once before the first middleware (see `RecallDecision`). */
  recall: Readonly<RecallDecision>;
  /**
   * The messages the middlewares before this one put into the prompt (memory blocks and replayed
   * history), in the order they ran: what a later middleware can read the context from.
   */
  injected: readonly ChatMessage[];
  /** What this middleware's `prefetch` returned for the turn, when it has one (awaited by `inject`). */
  prefetched?: Promise<unknown>;
}

/** What a middleware's `prefetch` knows: the turn, before any budget is shared out. */
export type PrefetchContext = Pick<
  MiddlewareContext,
  'scope' | 'sessionId' | 'userMessage' | 'turnIndex' | 'clock' | 'recall' | 'signal'
>;

/** Where injected messages go: memory blocks after the system prompt, replayed turns before the user message. */
export type Placement = 'system' | 'history';

export interface MiddlewareResult {
  messages: ChatMessage[];
  /** Items included (facts, chunks, turns, keys …). */
  included: number;
  /** The ids of the included items, when the middleware names them (e.g. the MemoryRefs it expanded). */
  includedIds?: string[];
  dropped: DroppedItem[];
  /**
   * The facts among the included items with the version shown (see `MiddlewareContext.injectedFactIds`;
   * the versions let the model's edits of these facts be checked, see `SeenVersions`).
   */
  injectedFacts?: readonly SeenRecord[];
  /**
   * Other records the messages showed the model, with the version shown (a thread's plan), so the tools'
   * edits of them are checked against it too (see `SeenVersions`). Unlike `injectedFacts`, they are not
   * fact ids.
   */
  shown?: readonly SeenRecord[];
  /** What a reader of the ledger should know besides items (a fallback taken, a step skipped). */
  notes?: string[];
}

/**
 * One memory feature's contribution to the prompt (a memory block, or replayed history). Middlewares run in registration order; each gets what is left of the budget, capped by
 * its own share.
 */
export interface PromptMiddleware {
  /** Names the feature in the ledger, e.g. `facts`. */
  readonly name: string;
  readonly placement: Placement;
  /**
   * True for a middleware that searches memory by the user message (the fact modes `recall` and
   * `relevant`). It runs only when the turn's recall decision says so; otherwise the turn records it as
   * skipped (0 tokens, one item dropped as `not-needed`) without calling `inject`.
   */
  readonly recall?: boolean;
  /**
   * Optional: start the turn's store reads, which do not depend on the budget. The conversation starts
   * every middleware's at once, before the first `inject`, and hands each its own as
   * `MiddlewareContext.prefetched`; `inject` without it (a runner that does not prefetch) reads itself.
   */
  prefetch?(context: PrefetchContext): Promise<unknown>;
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
  /** The facts the model was shown this turn, in memory blocks and tool results (and those it wrote). */
  recalledFactIds: readonly string[];
}

export const EMPTY_RESULT: MiddlewareResult = Object.freeze({ messages: [], included: 0, dropped: [] });
