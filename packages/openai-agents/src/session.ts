import { randomUUID } from 'node:crypto';
import { type ChatMessage, type Conversation, ValidationError } from '@kioku/core';
import { type KvEntry, LIMITS, type SessionStore } from '@kioku/core/store';
import type { AgentInputItem, Session } from '@openai/agents';
import { toChatMessages } from './items.js';

/** The session k-v keys that hold the Agents SDK's items (one key per item, in insertion order). */
export const ITEM_KEY_PREFIX = 'openai-agents.item.';

export interface KiokuSessionOptions {
  /** The conversation whose session holds the items and whose transcript records the turns. */
  conversation: Conversation;
  /** The session store the conversation lives in (`kioku.stores.sessions`). */
  sessions: SessionStore;
  /** Called after a turn is recorded in the transcript. */
  onTurnRecorded?: () => void;
}

function parseItem(entry: KvEntry): AgentInputItem | undefined {
  try {
    return JSON.parse(entry.value) as AgentInputItem;
  } catch {
    return undefined;
  }
}

/**
 * Results whose call is no longer in the list (the k-v cap evicted it, or `limit` cut it off): a model
 * API refuses a tool result without its call.
 */
function withoutOrphanResults(items: AgentInputItem[]): AgentInputItem[] {
  const calls = new Set<string>();
  return items.filter((item) => {
    const it = item as { type?: string; callId?: string };
    if (it.type === 'function_call' && it.callId) calls.add(it.callId);
    return it.type !== 'function_call_result' || (it.callId !== undefined && calls.has(it.callId));
  });
}

/**
 * The Agents SDK's `Session` over the conversation's Kioku session: each item is kept exactly, as JSON,
 * under its own key of the session's k-v map, so the session contract's caps apply (at most `kvCap` keys
 * per session, 200 by default, the oldest evicted first; at most `LIMITS.sessionValueChars` characters per
 * item). Every read and write is in the conversation's scope. Besides keeping the items, it records each
 * finished turn (user message, tool calls and results, final answer) in the session transcript with
 * `conversation.record`, where Kioku's memory features (extraction, the dream, recall, conversation
 * replay) read it. Clearing or popping items changes what the SDK replays, not the transcript.
 */
export class KiokuSession implements Session {
  readonly conversation: Conversation;
  readonly #sessions: SessionStore;
  readonly #onTurnRecorded: (() => void) | undefined;
  /** The turn being collected from `addItems`, recorded once it ends with an answer. */
  #pending: ChatMessage[] = [];
  #counter = 0;

  constructor(options: KiokuSessionOptions) {
    this.conversation = options.conversation;
    this.#sessions = options.sessions;
    this.#onTurnRecorded = options.onTurnRecorded;
  }

  async getSessionId(): Promise<string> {
    return this.conversation.sessionId;
  }

  /** The stored items, oldest first; with `limit`, the last `limit` of them. */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    const entries = await this.#itemEntries();
    const chosen = limit === undefined ? entries : limit <= 0 ? [] : entries.slice(-limit);
    return withoutOrphanResults(chosen.flatMap((entry) => parseItem(entry) ?? []));
  }

  /**
   * Append items (each checked against the size limit before any is written: ValidationError, nothing
   * stored), then record the turn in the transcript once it has ended with an answer.
   */
  async addItems(items: AgentInputItem[]): Promise<void> {
    const values = items.map((item, i) => {
      const value = JSON.stringify(item);
      if (value.length > LIMITS.sessionValueChars) {
        throw new ValidationError(
          `Session item ${i} takes ${value.length} characters; a session value holds at most ${LIMITS.sessionValueChars}. Nothing was stored.`,
          { details: { index: i, chars: value.length, limit: LIMITS.sessionValueChars } },
        );
      }
      return value;
    });
    const { scope, sessionId } = this.conversation;
    for (const value of values) {
      await this.#sessions.kvSet(scope, sessionId, this.#nextKey(), value);
    }
    await this.#collect(items);
  }

  /** Remove and return the newest item (two callers at once never get the same one). */
  async popItem(): Promise<AgentInputItem | undefined> {
    const { scope, sessionId } = this.conversation;
    for (;;) {
      const last = (await this.#itemEntries()).at(-1);
      if (!last) return undefined;
      if (await this.#sessions.kvDelete(scope, sessionId, last.key)) return parseItem(last);
    }
  }

  /** Remove every item. The transcript (Kioku's memory of the conversation) stays. */
  async clearSession(): Promise<void> {
    const { scope, sessionId } = this.conversation;
    for (const entry of await this.#itemEntries()) {
      await this.#sessions.kvDelete(scope, sessionId, entry.key);
    }
    this.#pending = [];
  }

  /** Record a turn still being collected (one that ended at a tool call); the next turn does it too. */
  async flush(): Promise<void> {
    if (this.#pending.length === 0) return;
    const messages = this.#pending;
    this.#pending = [];
    await this.conversation.record(messages);
    this.#onTurnRecorded?.();
  }

  async #itemEntries(): Promise<KvEntry[]> {
    const { scope, sessionId } = this.conversation;
    const entries = await this.#sessions.kvList(scope, sessionId);
    return entries.filter((e) => e.key.startsWith(ITEM_KEY_PREFIX));
  }

  /** Keys only need to be unique: the k-v map keeps insertion order. */
  #nextKey(): string {
    this.#counter += 1;
    return `${ITEM_KEY_PREFIX}${Date.now().toString(36)}.${this.#counter}.${randomUUID()}`;
  }

  async #collect(items: readonly AgentInputItem[]): Promise<void> {
    for (const message of toChatMessages(items)) {
      if (message.role === 'system') continue;
      // A new user message after an unfinished turn: that turn is over.
      if (message.role === 'user' && this.#pending.some((m) => m.role !== 'user')) await this.flush();
      this.#pending.push(message);
    }
    const last = this.#pending.at(-1);
    if (last?.role === 'assistant' && !last.toolCalls?.length) await this.flush();
  }
}
