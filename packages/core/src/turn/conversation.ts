import type { LedgerEntry, TurnLedger } from '../budget/ledger.js';
import { parseBudget, type TokenBudget, type TokenBudgetOptions } from '../budget/token-budget.js';
import { type Clock, systemClock } from '../clock.js';
import { runWithScope } from '../context.js';
import { ValidationError } from '../errors.js';
import type { ThreadScope } from '../scope.js';
import type { SessionStore } from '../sessions/store.js';
import { defaultTokenizer, type Tokenizer } from '../tokenizer.js';
import { executeToolCall } from '../toolkit/execute.js';
import { type OpenAIToolDefinition, type Tool, toOpenAITool } from '../toolkit/tool.js';
import type { MemoryFeature, ToolOutputProcessor } from './feature.js';
import {
  type ChatMessage,
  countMessagesTokens,
  countMessageTokens,
  countToolsTokens,
  type ToolCallRequest,
} from './messages.js';
import type { DroppedItem, PromptMiddleware } from './middleware.js';
import type { ChatModel } from './model.js';

export interface ConversationOptions {
  /** User, agent and thread; the thread is the session id. */
  scope: ThreadScope;
  sessions: SessionStore;
  features: readonly MemoryFeature[];
  systemPrompt?: string;
  budget?: TokenBudgetOptions;
  tokenizer?: Tokenizer;
  clock?: Clock;
}

export interface PreparedTurn {
  /** The prompt: system prompt, memory blocks, replayed history, then the user message. */
  messages: ChatMessage[];
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

export interface RunOptions {
  /** Model calls per turn before giving up on tool loops (default 8). */
  maxSteps?: number;
  signal?: AbortSignal;
}

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
  #turnIndex: number | undefined;
  /** The tool definitions' tokens (they do not change for a conversation), counted on first use. */
  #toolTokens: number | undefined;

  constructor(options: ConversationOptions) {
    this.scope = Object.freeze({ ...options.scope });
    this.#sessions = options.sessions;
    this.#middlewares = options.features.flatMap((f) => (f.middleware ? [f.middleware] : []));
    this.#outputProcessors = options.features.flatMap((f) => (f.toolOutput ? [f.toolOutput] : []));
    for (const feature of options.features) {
      for (const tool of feature.toolkit?.tools ?? []) {
        const existing = this.#toolsByName.get(tool.name);
        // Features may share a tool object (dynamic and long-term memory both offer delete_memory).
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
  }

  get sessionId(): string {
    return this.scope.threadId;
  }

  /** Build the prompt for `userMessage`. Throws ValidationError when the user message alone exceeds the budget. */
  prepare(userMessage: string, options: { signal?: AbortSignal } = {}): Promise<PreparedTurn> {
    return runWithScope(this.scope, async () => {
      const turnIndex = await this.#currentTurnIndex();
      const system: ChatMessage[] = this.#systemPrompt
        ? [{ role: 'system', content: this.#systemPrompt }]
        : [];
      const user: ChatMessage = { role: 'user', content: userMessage };
      const baseTokens = countMessagesTokens(this.#tokenizer, [...system, user]);
      this.#toolTokens ??= countToolsTokens(this.#tokenizer, this.tools);
      const toolTokens = this.#toolTokens;
      const maxTokens = this.#budget.maxTokens;
      if (baseTokens + toolTokens > maxTokens) {
        throw new ValidationError(
          `The system prompt and user message take ${baseTokens} tokens and the ${this.tools.length} tool ` +
            `definitions ${toolTokens}; the budget is ${maxTokens}. Raise budget.maxTokens or register fewer features.`,
        );
      }
      let remaining = maxTokens - baseTokens - toolTokens;
      const injected: ChatMessage[] = [];
      const history: ChatMessage[] = [];
      const entries: LedgerEntry[] = [];
      const injectedFactIds = new Set<string>();
      for (const middleware of this.#middlewares) {
        const share = this.#budget.shares[middleware.name];
        const allotted = Math.min(share ?? remaining, remaining);
        const result = await middleware.inject({
          scope: this.scope,
          sessionId: this.sessionId,
          userMessage,
          turnIndex,
          maxTokens: allotted,
          tokenizer: this.#tokenizer,
          clock: this.#clock,
          injectedFactIds,
          ...(options.signal ? { signal: options.signal } : {}),
        });
        const { messages, dropped, tokens } = this.#enforce(result.messages, allotted);
        // A block cut by the safety net below still counts its facts as shown: skipping them later is safe.
        for (const id of result.injectedFactIds ?? []) injectedFactIds.add(id);
        remaining -= tokens;
        (middleware.placement === 'history' ? history : injected).push(...messages);
        entries.push({
          middleware: middleware.name,
          allottedTokens: allotted,
          tokens,
          included: result.included,
          dropped: [...result.dropped, ...dropped],
        });
      }
      const messages = [...system, ...injected, ...history, user];
      const ledger: TurnLedger = {
        maxTokens,
        baseTokens,
        // The tool definitions go with every request, so the budget pays for them before any block.
        tools: { definitions: this.tools.length, tokens: toolTokens },
        entries,
        totalTokens: maxTokens - remaining,
        tokenizer: this.#tokenizer.name,
      };
      return { messages, tools: this.tools, ledger, turnIndex };
    });
  }

  /** Run a model's tool calls in this conversation's scope; results pass through the output processors. */
  executeToolCalls(
    calls: readonly ToolCallRequest[],
    options: { signal?: AbortSignal } = {},
  ): Promise<ChatMessage[]> {
    return runWithScope(this.scope, async () => {
      const out: ChatMessage[] = [];
      for (const call of calls) {
        let result = await executeToolCall(this.#toolsByName, call, {
          scope: this.scope,
          ...(options.signal ? { signal: options.signal } : {}),
        });
        for (const processor of this.#outputProcessors) {
          result = await processor.process(result, { scope: this.scope, arguments: call.arguments });
        }
        out.push({ role: 'tool', content: result.content, toolCallId: call.id, name: call.name });
      }
      return out;
    });
  }

  /** Append a finished turn to the transcript, then let the features react (delta tracking, auto-store). */
  record(messages: readonly ChatMessage[]): Promise<void> {
    return runWithScope(this.scope, async () => {
      if (messages.length === 0) return;
      const turnIndex = await this.#currentTurnIndex();
      await this.#sessions.transcriptAppend(this.scope, this.sessionId, [...messages]);
      this.#turnIndex = turnIndex + 1;
      for (const middleware of this.#middlewares) {
        await middleware.afterTurn?.({ scope: this.scope, sessionId: this.sessionId, turnIndex, messages });
      }
    });
  }

  /**
   * One whole turn: prepare, call the model, run its tool calls and call it again until it answers or
   * `maxSteps` is reached, then record everything. If the model throws, what the turn produced so far is
   * recorded before the error propagates.
   */
  async run(userMessage: string, model: ChatModel, options: RunOptions = {}): Promise<TurnResult> {
    const maxSteps = options.maxSteps ?? 8;
    const prepared = await this.prepare(userMessage, options);
    const turn: ChatMessage[] = [{ role: 'user', content: userMessage }];
    const transcript = [...prepared.messages];
    let steps = 0;
    let answer = '';
    let pendingTools = false;
    try {
      while (steps < maxSteps) {
        steps++;
        const reply = await model.complete({
          messages: transcript,
          tools: prepared.tools,
          ...(options.signal ? { signal: options.signal } : {}),
        });
        const assistant: ChatMessage = { ...reply, role: 'assistant' };
        turn.push(assistant);
        transcript.push(assistant);
        if (!assistant.toolCalls?.length) {
          answer = assistant.content;
          pendingTools = false;
          break;
        }
        pendingTools = true;
        const results = await this.executeToolCalls(assistant.toolCalls, options);
        turn.push(...results);
        transcript.push(...results);
      }
    } finally {
      await this.record(turn);
    }
    return { answer, messages: turn, ledger: prepared.ledger, steps, stepLimitReached: pendingTools };
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
