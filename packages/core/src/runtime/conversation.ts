import type { Span } from '@opentelemetry/api';
import { runWithSignal } from '../foundation/abort-context.js';
import { type Clock, systemClock } from '../foundation/clock.js';
import { runWithScope } from '../foundation/context.js';
import { TurnNotRecordedError, ValidationError } from '../foundation/errors.js';
import { timeOrderedId } from '../foundation/ids.js';
import type { ThreadScope } from '../foundation/scope.js';
import type { ChatModel } from '../model/chat-model.js';
import { executeToolCall, type ToolResult } from '../model/execute-tool.js';
import {
  type ChatMessage,
  countMessagesTokens,
  countMessageTokens,
  countToolsTokens,
  type ToolCall,
} from '../model/messages.js';
import { observeModelCall } from '../model/model-call-telemetry.js';
import { SeenVersions } from '../model/seen-versions.js';
import { type OpenAIToolDefinition, type Tool, toOpenAITool } from '../model/tool.js';
import type { SessionStore } from '../store/sessions/store.js';
import type { Telemetry } from '../telemetry/telemetry.js';
import { defaultTokenizer, type Tokenizer } from '../tokens/tokenizer.js';
import type { MemoryFeature, ToolOutputProcessor } from './feature.js';
import { decideRecall } from './intent/decide.js';
import { deterministicIntent } from './intent/deterministic.js';
import {
  type IntentClassifier,
  RECALL_MODES,
  type RecallDecision,
  type RecallMode,
} from './intent/recall.js';
import type { LedgerEntry, TurnLedger } from './ledger.js';
import type { DroppedItem, PromptMiddleware } from './middleware.js';
import { parseBudget, type TokenBudget, type TokenBudgetOptions } from './token-budget.js';
import { type TurnPhase, TurnTelemetry } from './turn-telemetry.js';

export interface ConversationOptions {
  /** User, agent and thread; the thread is the session id. */
  scope: ThreadScope;
  sessions: SessionStore;
  features: readonly MemoryFeature[];
  systemPrompt?: string;
  budget?: TokenBudgetOptions;
  tokenizer?: Tokenizer;
  clock?: Clock;
  /**
   * When the recall middlewares search memory (default `always`): `auto` runs the intent step first and
   * skips recall for a concrete message; `never` turns recall off. A turn can override it (`prepare`,
   * `run`).
   */
  recall?: RecallMode;
  /** The intent step of `recall: 'auto'` (default: the deterministic classifier, no model call). */
  intent?: IntentClassifier;
  /** Spans and metrics of each turn (the builder's, see `KiokuOptions.telemetry`); none when undefined. */
  telemetry?: Telemetry | undefined;
  /**
   * The session was just created for this conversation (`startConversation`): its first turn's reads start
   * as turn 0 beside the transcript read that counts its turns, instead of after it.
   */
  newSession?: boolean;
}

export interface PrepareOptions {
  signal?: AbortSignal;
  /** This turn's recall mode, over the conversation's. */
  recall?: RecallMode;
}

export interface PreparedTurn {
  /** The prompt: system prompt, memory blocks, replayed history, then the user message. */
  messages: ChatMessage[];
  /** The system prompt and the memory blocks (the start of `messages`). */
  system: ChatMessage[];
  /** Replayed earlier turns, which go just before the user message. */
  history: ChatMessage[];
  tools: OpenAIToolDefinition[];
  ledger: TurnLedger;
  turnIndex: number;
}

export interface TurnResult {
  /** The model's final answer (empty when the step limit was hit first). */
  answer: string;
  /** Everything this turn added to the transcript, in order. */
  messages: ChatMessage[];
  ledger: TurnLedger;
  /** Model calls made. */
  steps: number;
  /** True when the loop stopped at `maxSteps` with tool calls still pending. */
  stepLimitReached: boolean;
}

export interface PrepareOptions {
  signal?: AbortSignal;
  /**
   * Messages the app sends with the prompt besides Kioku's (its own instructions, history it keeps
   * itself). They are not part of the returned prompt, but the budget pays for them first, like the system
   * prompt, so the memory blocks fit beside them.
   */
  appMessages?: readonly ChatMessage[];
  /** The app's own tool definitions sent with the request, paid for like Kioku's. */
  appTools?: readonly OpenAIToolDefinition[];
}

export interface RunOptions {
  /** Model calls per turn before giving up on tool loops (default 8). */
  maxSteps?: number;
  signal?: AbortSignal;
  /** Content deltas of each model reply as they stream in (passed to `ChatModel.complete`). */
  onToken?: (text: string) => void;
  /** This turn's recall mode, over the conversation's (`'always'` forces recall). */
  recall?: RecallMode;
  /**
   * The turn's id, its idempotency key in the transcript (see `RecordOptions.turnId`); default a new
   * UUIDv7. When recording fails, `run` throws a `TurnNotRecordedError` carrying it and the turn's
   * messages, for a retry with `record`.
   */
  turnId?: string;
}

export interface RecordOptions {
  /**
   * The turn's idempotency key: a retry of `record` with the same id after an ambiguous failure (the store
   * may or may not have written the turn) stores the turn once (`SessionStore.transcriptAppend`).
   */
  turnId?: string;
  /**
   * Stop waiting when it aborts: the store calls of the record fail with an AbortedError (ABORTED). The
   * turn's append is one atomic call, so the transcript has the turn whole or not at all; retry with the
   * same `turnId` to store it once.
   */
  signal?: AbortSignal;
}

/** Transcript entries the intent step reads as the message's context when the prompt replays history. */
export const INTENT_CONTEXT_ENTRIES = 24;

/**
 * One conversation (a session of one user with one agent): prepares each turn's prompt through the
 * features' middlewares within one token budget, runs tool calls inside the user's scope, and records the
 * turn in the session transcript. `run` does all of it around a `ChatModel`.
 */
export class Conversation {
  readonly scope: Readonly<ThreadScope>;
  readonly tools: OpenAIToolDefinition[];
  readonly #sessions: SessionStore;
  readonly #middlewares: PromptMiddleware[];
  readonly #toolsByName = new Map<string, Tool>();
  readonly #outputProcessors: ToolOutputProcessor[];
  readonly #systemPrompt: string | undefined;
  readonly #budget: TokenBudget;
  readonly #tokenizer: Tokenizer;
  readonly #clock: Clock;
  readonly #recall: RecallMode;
  readonly #intent: IntentClassifier;
  /** A feature reads the turns from the transcript outbox: appends mark the session pending. */
  readonly #outbox: boolean;
  /** What the model has been shown, so its edits are checked against those versions. */
  readonly #seen = new SeenVersions();
  #turnIndex: number | undefined;
  /** Set until the first prepare of a session this conversation created (see `#turnReads`). */
  #newSession: boolean;
  /** The user message of the turn being run (the last one prepared): tools check stored text against it. */
  #userMessage: string | undefined;
  /** The tool definitions' tokens (they do not change for a conversation), counted on first use. */
  #toolTokens: number | undefined;
  readonly #telemetry: TurnTelemetry | undefined;

  constructor(options: ConversationOptions) {
    this.scope = Object.freeze({ ...options.scope });
    this.#sessions = options.sessions;
    this.#newSession = options.newSession === true;
    this.#middlewares = options.features.flatMap((f) => (f.middleware ? [f.middleware] : []));
    this.#outputProcessors = options.features.flatMap((f) => (f.toolOutput ? [f.toolOutput] : []));
    for (const feature of options.features) {
      for (const tool of feature.toolkit?.tools ?? []) {
        const existing = this.#toolsByName.get(tool.name);
        // Features may share a tool object (the fact modes `all` and `recall` both offer delete_memory).
        if (existing && existing !== tool)
          throw new ValidationError(`Two features define the tool "${tool.name}".`);
        this.#toolsByName.set(tool.name, tool);
      }
    }
    this.tools = [...this.#toolsByName.values()].map(toOpenAITool);
    this.#systemPrompt = options.systemPrompt;
    this.#budget = parseBudget(options.budget);
    this.#tokenizer = options.tokenizer ?? defaultTokenizer;
    this.#clock = options.clock ?? systemClock;
    this.#recall = parseRecallMode(options.recall ?? 'always');
    this.#intent = options.intent ?? deterministicIntent();
    this.#outbox = options.features.some((f) => f.outbox === true);
    this.#telemetry = options.telemetry ? new TurnTelemetry(options.telemetry, this.scope) : undefined;
  }

  get sessionId(): string {
    return this.scope.threadId;
  }

  /** Build the prompt for `userMessage`. Throws ValidationError when the user message alone exceeds the budget. */
  prepare(userMessage: string, options: PrepareOptions = {}): Promise<PreparedTurn> {
    this.#userMessage = userMessage;
    return this.#phase('prepare', (span) =>
      runWithSignal(options.signal, () => this.#prepare(userMessage, options, span)),
    );
  }

  #prepare(userMessage: string, options: PrepareOptions, span: Span | undefined): Promise<PreparedTurn> {
    return runWithScope(this.scope, async () => {
      const recall = await this.#decideRecall(userMessage, options);
      const system: ChatMessage[] = this.#systemPrompt
        ? [{ role: 'system', content: this.#systemPrompt }]
        : [];
      const user: ChatMessage = { role: 'user', content: userMessage };
      const appMessages = options.appMessages ?? [];
      const appTools = options.appTools ?? [];
      const budgetDone = this.#telemetry?.budget(span);
      const baseTokens = countMessagesTokens(this.#tokenizer, [...system, ...appMessages, user]);
      this.#toolTokens ??= countToolsTokens(this.#tokenizer, this.tools);
      const toolTokens = this.#toolTokens + countToolsTokens(this.#tokenizer, appTools);
      const definitions = this.tools.length + appTools.length;
      const maxTokens = this.#budget.maxTokens;
      budgetDone?.({ maxTokens, baseTokens, tools: { definitions, tokens: toolTokens } });
      if (baseTokens + toolTokens > maxTokens) {
        throw new ValidationError(
          `The system prompt${appMessages.length ? ", the app's messages" : ''} and user message take ` +
            `${baseTokens} tokens and the ${definitions} tool definitions ${toolTokens}; the budget is ` +
            `${maxTokens}. Raise budget.maxTokens or register fewer features.`,
        );
      }
      let remaining = maxTokens - baseTokens - toolTokens;
      const injected: ChatMessage[] = [];
      const history: ChatMessage[] = [];
      const entries: LedgerEntry[] = [];
      const injectedFactIds = new Set<string>();
      // Every middleware's messages in the order they ran: the context a later middleware reads.
      const shown: ChatMessage[] = [];
      const { turnIndex, prefetched } = await this.#turnReads(userMessage, recall, options.signal);
      for (const middleware of this.#middlewares) {
        const share = this.#budget.shares[middleware.name];
        const allotted = Math.min(share ?? remaining, remaining);
        if (middleware.recall && !recall.recall) {
          const entry = skippedEntry(middleware.name, allotted, recall);
          entries.push(entry);
          this.#telemetry?.skipped(entry);
          continue;
        }
        const data = prefetched.get(middleware);
        const { entry, messages } = await this.#stage(middleware.name, span, async () => {
          const result = await middleware.inject({
            scope: this.scope,
            sessionId: this.sessionId,
            userMessage,
            turnIndex,
            maxTokens: allotted,
            tokenizer: this.#tokenizer,
            clock: this.#clock,
            injectedFactIds,
            recall,
            injected: [...shown],
            ...(options.signal ? { signal: options.signal } : {}),
            ...(data ? { prefetched: data } : {}),
          });
          const { messages, dropped, tokens } = this.#enforce(result.messages, allotted);
          // A block cut by the safety net below still counts its facts as shown: skipping them later is safe.
          for (const fact of result.injectedFacts ?? []) {
            injectedFactIds.add(fact.id);
            this.#seen.note(fact);
          }
          for (const record of result.shown ?? []) this.#seen.note(record);
          const entry: LedgerEntry = {
            middleware: middleware.name,
            allottedTokens: allotted,
            tokens,
            included: result.included,
            ...(result.includedIds ? { includedIds: [...result.includedIds] } : {}),
            dropped: [...result.dropped, ...dropped],
            ...(result.notes?.length ? { notes: [...result.notes] } : {}),
          };
          return { entry, messages };
        });
        remaining -= entry.tokens;
        (middleware.placement === 'history' ? history : injected).push(...messages);
        shown.push(...messages);
        entries.push(entry);
      }
      const messages = [...system, ...injected, ...history, user];
      const ledger: TurnLedger = {
        maxTokens,
        baseTokens,
        // The tool definitions go with every request, so the budget pays for them before any block.
        tools: { definitions, tokens: toolTokens },
        recall,
        entries,
        totalTokens: maxTokens - remaining,
        tokenizer: this.#tokenizer.name,
      };
      this.#telemetry?.prepared(span, ledger, turnIndex, userMessage);
      return { messages, system: [...system, ...injected], history, tools: this.tools, ledger, turnIndex };
    });
  }

  /** Run a model's tool calls in this conversation's scope; results pass through the output processors. */
  executeToolCalls(
    calls: readonly ToolCall[],
    options: { signal?: AbortSignal } = {},
  ): Promise<ChatMessage[]> {
    return runWithScope(this.scope, async () => {
      const out: ChatMessage[] = [];
      for (const call of calls) {
        const run = async () => {
          const result = await executeToolCall(this.#toolsByName, call, {
            scope: this.scope,
            seen: this.#seen,
            ...(this.#userMessage !== undefined ? { userMessage: this.#userMessage } : {}),
            ...(options.signal ? { signal: options.signal } : {}),
          });
          return this.#process(result, call);
        };
        const processed = await (this.#telemetry ? this.#telemetry.tool(call, run) : run());
        out.push({ role: 'tool', content: processed.content, toolCallId: call.id, name: call.name });
      }
      return out;
    });
  }

  /**
   * Pass the output of a tool Kioku did not run (an app's own tool, run by an agent framework) through the
   * features' output processors in this conversation's scope, as `executeToolCalls` does for Kioku's tools:
   * with offload on, a large output is stored in the user's detail memory and a `[MemoryRef: …]` comes back.
   */
  processToolOutput(call: ToolCall, output: string): Promise<string> {
    return runWithScope(this.scope, async () => {
      const result = { toolCallId: call.id, name: call.name, content: output, isError: false };
      return (await this.#process(result, call)).content;
    });
  }

  async #process(result: ToolResult, call: ToolCall): Promise<ToolResult> {
    let processed = result;
    for (const processor of this.#outputProcessors) {
      processed = await processor.process(processed, { scope: this.scope, arguments: call.arguments });
    }
    return processed;
  }

  /**
   * Append a finished turn to the transcript (marking the session pending when a feature reads the
   * outbox, in the same atomic step), then let the features react (delta tracking, auto-store). A turn
   * whose `turnId` the transcript already holds is not appended again, and the features do not react again.
   */
  record(messages: readonly ChatMessage[], options: RecordOptions = {}): Promise<void> {
    return this.#phase('record', () => runWithSignal(options.signal, () => this.#record(messages, options)));
  }

  #record(messages: readonly ChatMessage[], options: RecordOptions): Promise<void> {
    return runWithScope(this.scope, async () => {
      if (messages.length === 0) return;
      const turnIndex = await this.#currentTurnIndex();
      const appended = await this.#sessions.transcriptAppend(this.scope, this.sessionId, [...messages], {
        ...(options.turnId === undefined ? {} : { turnId: options.turnId }),
        ...(this.#outbox ? { pending: true } : {}),
      });
      if (appended.length === 0) {
        // Stored by an earlier attempt: the turn count is read again from the transcript when needed.
        this.#turnIndex = undefined;
        return;
      }
      this.#turnIndex = turnIndex + 1;
      const recalledFactIds = this.#seen.takeNotedFacts();
      for (const middleware of this.#middlewares) {
        await middleware.afterTurn?.({
          scope: this.scope,
          sessionId: this.sessionId,
          turnIndex,
          messages,
          recalledFactIds,
        });
      }
    });
  }

  /**
   * One whole turn: prepare, call the model, run its tool calls and call it again until it answers or
   * `maxSteps` is reached, then record everything. If the model throws, what the turn produced so far is
   * recorded before the error propagates.
   */
  run(userMessage: string, model: ChatModel, options: RunOptions = {}): Promise<TurnResult> {
    return this.#phase('run', (span) => this.#run(userMessage, model, options, span));
  }

  async #run(
    userMessage: string,
    model: ChatModel,
    options: RunOptions,
    span: Span | undefined,
  ): Promise<TurnResult> {
    const maxSteps = options.maxSteps ?? 8;
    const turnId = options.turnId ?? timeOrderedId(this.#clock.now());
    const prepared = await this.prepare(userMessage, options);
    const turn: ChatMessage[] = [{ role: 'user', content: userMessage }];
    const transcript = [...prepared.messages];
    let steps = 0;
    let answer = '';
    let pendingTools = false;
    let forcedBy: string | undefined;
    try {
      while (steps < maxSteps) {
        steps++;
        const request = {
          messages: transcript,
          tools: prepared.tools,
          ...(options.signal ? { signal: options.signal } : {}),
          ...(options.onToken ? { onToken: options.onToken } : {}),
        };
        const reply = await (this.#telemetry
          ? observeModelCall(
              model,
              'turn',
              () => model.complete(request),
              (r) => r.usage,
              this.#telemetry.telemetry,
            )
          : model.complete(request));
        // Usage is the call's, not the message's: it stays out of the transcript.
        const { usage: _usage, ...message } = reply;
        const assistant: ChatMessage = { ...message, role: 'assistant' };
        turn.push(assistant);
        transcript.push(assistant);
        if (!assistant.toolCalls?.length) {
          answer = assistant.content;
          pendingTools = false;
          break;
        }
        pendingTools = true;
        if (!prepared.ledger.recall.recall) {
          forcedBy ??= assistant.toolCalls.find((c) => this.#toolsByName.get(c.name)?.recall)?.name;
        }
        const results = await this.executeToolCalls(assistant.toolCalls, options);
        turn.push(...results);
        transcript.push(...results);
      }
    } finally {
      await this.record(turn, { turnId }).catch((error: unknown) => {
        throw new TurnNotRecordedError(this.sessionId, turnId, turn, error);
      });
    }
    const ledger = forcedBy
      ? { ...prepared.ledger, recall: { ...prepared.ledger.recall, forcedBy: { tool: forcedBy } } }
      : prepared.ledger;
    this.#telemetry?.ran(span, { steps, answer, stepLimitReached: pendingTools });
    return { answer, messages: turn, ledger, steps, stepLimitReached: pendingTools };
  }

  /**
   * The turn's index and its middlewares' store reads (`#prefetch`). A session this conversation created
   * has no turns unless something wrote to it through the store since (an imported history), so its first
   * turn's reads start as turn 0 beside the read that counts the turns — on a networked store, one round
   * trip instead of two — and start again with the count in the rare case it is not 0.
   */
  async #turnReads(
    userMessage: string,
    recall: RecallDecision,
    signal: AbortSignal | undefined,
  ): Promise<{ turnIndex: number; prefetched: Map<PromptMiddleware, Promise<unknown>> }> {
    if (this.#newSession && this.#turnIndex === undefined) {
      this.#newSession = false;
      const asFirst = this.#prefetch(userMessage, 0, recall, signal);
      const turnIndex = await this.#currentTurnIndex();
      if (turnIndex === 0) return { turnIndex, prefetched: asFirst };
    }
    const turnIndex = await this.#currentTurnIndex();
    return { turnIndex, prefetched: this.#prefetch(userMessage, turnIndex, recall, signal) };
  }

  /**
   * Every middleware's store reads of the turn, started at once (`PromptMiddleware.prefetch`), so that on
   * a networked store they take one round trip together instead of one each, in turn. A middleware that
   * does not run this turn (recall not needed) is not asked. A read's failure is met by its `inject`.
   */
  #prefetch(
    userMessage: string,
    turnIndex: number,
    recall: RecallDecision,
    signal: AbortSignal | undefined,
  ): Map<PromptMiddleware, Promise<unknown>> {
    const started = new Map<PromptMiddleware, Promise<unknown>>();
    const context = {
      scope: this.scope,
      sessionId: this.sessionId,
      userMessage,
      turnIndex,
      clock: this.#clock,
      recall,
      ...(signal ? { signal } : {}),
    };
    for (const middleware of this.#middlewares) {
      if (!middleware.prefetch || (middleware.recall && !recall.recall)) continue;
      const prefetch = () => middleware.prefetch!(context);
      const read = this.#telemetry ? this.#telemetry.prefetch(middleware.name, prefetch) : prefetch();
      read.catch(() => {}); // awaited by its inject, which reports the failure
      started.set(middleware, read);
    }
    return started;
  }

  /**
   * The recall decision of a turn. `auto` classifies the message against the context the prompt will
   * hold: the system prompt, and the last transcript entries when a middleware replays history. Without
   * any recall middleware there is nothing to decide (and no model call is made).
   */
  async #decideRecall(userMessage: string, options: PrepareOptions): Promise<RecallDecision> {
    const mode = options.recall === undefined ? this.#recall : parseRecallMode(options.recall);
    if (mode === 'auto' && !this.#middlewares.some((m) => m.recall)) {
      return { recall: false, mode, by: 'setting', reason: 'No recall middleware is registered.' };
    }
    const context: ChatMessage[] = [];
    if (mode === 'auto') {
      if (this.#systemPrompt) context.push({ role: 'system', content: this.#systemPrompt });
      if (this.#middlewares.some((m) => m.placement === 'history')) {
        const entries = await this.#sessions.transcriptReadLast(
          this.scope,
          this.sessionId,
          INTENT_CONTEXT_ENTRIES,
        );
        for (const e of entries) context.push({ role: e.role, content: e.content });
      }
    }
    return decideRecall(mode, this.#intent, {
      userMessage,
      context,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }

  /** A phase of the turn in its span (`kioku.prepare`, `kioku.record`, `kioku.turn`), or just `fn`. */
  #phase<T>(phase: TurnPhase, fn: (span: Span | undefined) => Promise<T>): Promise<T> {
    return this.#telemetry ? this.#telemetry.phase(phase, this.#turnIndex, fn) : fn(undefined);
  }

  /** One memory stage with its ledger entry on the trace (see `TurnTelemetry.stage`) and metrics, or just `fn`. */
  #stage(
    name: string,
    prepare: Span | undefined,
    fn: () => Promise<{ entry: LedgerEntry; messages: ChatMessage[] }>,
  ): Promise<{ entry: LedgerEntry; messages: ChatMessage[] }> {
    return this.#telemetry ? this.#telemetry.stage(name, prepare, fn) : fn();
  }

  async #currentTurnIndex(): Promise<number> {
    if (this.#turnIndex === undefined) {
      const entries = await this.#sessions.transcriptReadLast(this.scope, this.sessionId, 100_000);
      this.#turnIndex = entries.filter((e) => e.role === 'user').length;
    }
    return this.#turnIndex;
  }

  /**
   * Safety net: a middleware that overshoots its allotment loses its last messages, recorded as dropped.
   * Each message is counted once (this runs on every middleware of every turn).
   */
  #enforce(
    messages: ChatMessage[],
    allotted: number,
  ): { messages: ChatMessage[]; dropped: DroppedItem[]; tokens: number } {
    const counts = messages.map((m) => countMessageTokens(this.#tokenizer, m));
    let tokens = counts.reduce((sum, n) => sum + n, 0);
    const kept = [...messages];
    const dropped: DroppedItem[] = [];
    while (kept.length > 0 && tokens > allotted) {
      kept.pop();
      const cost = counts[kept.length]!;
      tokens -= cost;
      dropped.push({ id: `message-${kept.length}`, reason: 'budget', tokens: cost });
    }
    return { messages: kept, dropped, tokens };
  }
}

function parseRecallMode(mode: RecallMode): RecallMode {
  if (!RECALL_MODES.includes(mode)) {
    throw new ValidationError(
      `recall must be one of ${RECALL_MODES.join(', ')}; got ${JSON.stringify(mode)}.`,
    );
  }
  return mode;
}

/** The ledger entry of a recall middleware the decision skipped: nothing searched, nothing spent. */
function skippedEntry(middleware: string, allotted: number, recall: RecallDecision): LedgerEntry {
  return {
    middleware,
    allottedTokens: allotted,
    tokens: 0,
    included: 0,
    dropped: [{ id: 'recall', reason: 'not-needed' }],
    notes: [`skipped: ${recall.reason}`],
  };
}
