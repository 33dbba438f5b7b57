import {
  type ChatMessage,
  type Conversation,
  type Kioku,
  type SessionInfo,
  type TurnLedger,
  UnsupportedError,
} from '@kioku/core';
import type { ErasureReceipt } from '@kioku/core/passes';
import { MAX_TTL_MS } from '@kioku/core/store';
import { MastraMemory, type StorageThreadType, type WorkingMemoryTemplate } from '@mastra/core/memory';
import type { InputProcessor, OutputProcessor } from '@mastra/core/processors';
import type {
  StorageCloneThreadOutput,
  StorageListThreadsInput,
  StorageListThreadsOutput,
} from '@mastra/core/storage';
import { type DbMessage, dbMessage, toChatMessages } from './messages.js';
import { KiokuContextProcessor, KiokuRecordProcessor, lastLedger } from './processors.js';

/** The session metadata key naming the Mastra thread a Kioku session holds. */
export const THREAD_METADATA_KEY = 'mastraThreadId';
/** The session k-v key holding the Mastra thread's title and metadata. */
const THREAD_KV_KEY = 'mastra.thread';
/** The working memory key of a resource's Mastra working memory. */
const WORKING_MEMORY_KEY = 'mastra/working-memory';

interface ThreadRecord {
  title?: string;
  metadata?: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

export interface KiokuMastraMemoryOptions {
  /** The Kioku whose features prepare each turn's context (`KiokuBuilder(…).withFacts(…)….build()`). */
  kioku: Kioku;
  /** Partition each resource's memory per agent (Kioku's `agentId`). */
  agentId?: string;
  /** Mastra's memory id (default `kioku`). */
  id?: string;
}

/**
 * Kioku as a Mastra agent's memory (`new Agent({ memory: new KiokuMastraMemory({ kioku }) })`). Mastra's
 * resource id is Kioku's user: every read and write is scoped to the resource the run names, and a thread
 * is one Kioku session of that resource (a thread id another resource uses is another session).
 *
 * Mastra asks its memory for processors: this one gives two, in place of Mastra's message history,
 * semantic recall and working memory processors — one before the model that adds Kioku's context for the
 * user's message (the resource's facts, recalled memories, the thread's replayed turns, working memory …
 * within one token budget), one after it that records the exchange in Kioku's transcript, where
 * extraction and the rest of Kioku's memory read it.
 */
export class KiokuMastraMemory extends MastraMemory {
  readonly kioku: Kioku;
  readonly #agentId: string | undefined;
  /** Thread id → resource id, for `getThreadById` (which Mastra calls without the resource). */
  readonly #resources = new Map<string, string>();
  readonly #conversations = new Map<string, Promise<Conversation>>();
  /** [resource, thread] → its session: a session's id never changes, and Mastra asks for the thread twice a run. */
  readonly #sessions = new Map<string, SessionInfo>();

  constructor(options: KiokuMastraMemoryOptions) {
    super({ id: options.id ?? 'kioku', name: 'KiokuMastraMemory' });
    this.kioku = options.kioku;
    this.#agentId = options.agentId;
  }

  override async getInputProcessors(): Promise<InputProcessor[]> {
    return [new KiokuContextProcessor(this)];
  }

  override async getOutputProcessors(): Promise<OutputProcessor[]> {
    return [new KiokuRecordProcessor(this)];
  }

  /** The Kioku conversation of a resource's thread (its session, created on first use). */
  conversation(resourceId: string, threadId: string): Promise<Conversation> {
    const key = JSON.stringify([resourceId, threadId]);
    let conversation = this.#conversations.get(key);
    if (!conversation) {
      conversation = this.#session(resourceId, threadId, true).then((session) =>
        this.kioku.resumeConversation(this.#scope(resourceId), session!.id),
      );
      conversation.catch(() => this.#conversations.delete(key));
      this.#conversations.set(key, conversation);
    }
    return conversation;
  }

  /** The ledger (tokens per memory kind, what was included) of the thread's last turn, if it had one. */
  async ledger(resourceId: string, threadId: string): Promise<TurnLedger | undefined> {
    return lastLedger(await this.conversation(resourceId, threadId));
  }

  /**
   * Erase everything Kioku keeps of a resource (its threads, transcripts, facts, working memory …) and
   * return Kioku's verified erasure receipt.
   */
  async forgetResource(resourceId: string): Promise<ErasureReceipt> {
    for (const [thread, resource] of this.#resources)
      if (resource === resourceId) this.#resources.delete(thread);
    for (const key of this.#conversations.keys())
      if (JSON.parse(key)[0] === resourceId) this.#conversations.delete(key);
    for (const key of this.#sessions.keys())
      if (JSON.parse(key)[0] === resourceId) this.#sessions.delete(key);
    return this.kioku.privacy.forgetUser(resourceId);
  }

  async getThreadById({ threadId }: { threadId: string }): Promise<StorageThreadType | null> {
    const resourceId = this.#resources.get(threadId);
    if (resourceId === undefined) return null;
    const session = await this.#session(resourceId, threadId, false);
    return session ? this.#thread(resourceId, session) : null;
  }

  async listThreads(args: StorageListThreadsInput): Promise<StorageListThreadsOutput> {
    const resourceId = (args.filter as { resourceId?: string } | undefined)?.resourceId;
    if (resourceId === undefined) {
      throw new UnsupportedError(
        'KiokuMastraMemory lists the threads of one resource: pass filter: { resourceId }. Kioku keeps each user apart and has no listing across users.',
      );
    }
    const sessions = (await this.kioku.stores.sessions.list(this.#scope(resourceId))).filter(
      (s) => typeof s.metadata[THREAD_METADATA_KEY] === 'string',
    );
    const wanted = (args.filter as { metadata?: Record<string, unknown> }).metadata ?? {};
    const threads = (await Promise.all(sessions.map((s) => this.#thread(resourceId, s)))).filter((t) =>
      Object.entries(wanted).every(([k, v]) => JSON.stringify(t.metadata?.[k]) === JSON.stringify(v)),
    );
    const perPage = args.perPage ?? 100;
    const page = args.page ?? 0;
    const shown = perPage === false ? threads : threads.slice(page * perPage, (page + 1) * perPage);
    return {
      threads: shown,
      total: threads.length,
      page,
      perPage,
      hasMore: perPage !== false && (page + 1) * perPage < threads.length,
    };
  }

  async saveThread({ thread }: { thread: StorageThreadType }): Promise<StorageThreadType> {
    const session = (await this.#session(thread.resourceId, thread.id, true))!;
    const record: ThreadRecord = {
      ...(thread.title === undefined ? {} : { title: thread.title }),
      ...(thread.metadata === undefined ? {} : { metadata: thread.metadata }),
      createdAt: (thread.createdAt ?? new Date()).toISOString(),
      updatedAt: new Date().toISOString(),
    };
    await this.kioku.stores.sessions.kvSet(
      this.#scope(thread.resourceId),
      session.id,
      THREAD_KV_KEY,
      JSON.stringify(record),
    );
    return this.#thread(thread.resourceId, session);
  }

  async updateThread(args: {
    id: string;
    title?: string;
    metadata?: Record<string, unknown>;
  }): Promise<StorageThreadType> {
    const existing = await this.getThreadById({ threadId: args.id });
    if (!existing)
      throw new UnsupportedError(`Thread "${args.id}" is not known to this memory: save it first.`);
    return this.saveThread({
      thread: {
        ...existing,
        ...(args.title === undefined ? {} : { title: args.title }),
        ...(args.metadata === undefined ? {} : { metadata: args.metadata }),
      },
    });
  }

  async deleteThread(threadId: string): Promise<void> {
    const resourceId = this.#resources.get(threadId);
    if (resourceId === undefined) return;
    const session = await this.#session(resourceId, threadId, false);
    if (session) await this.kioku.privacy.forgetSession(this.#scope(resourceId), session.id);
    this.#resources.delete(threadId);
    this.#conversations.delete(JSON.stringify([resourceId, threadId]));
    this.#sessions.delete(JSON.stringify([resourceId, threadId]));
  }

  /** Appends the messages to their thread's transcript (the agent's turns are recorded by the processor). */
  async saveMessages({ messages }: { messages: DbMessage[] }): Promise<{ messages: DbMessage[] }> {
    const byThread = new Map<string, DbMessage[]>();
    for (const m of messages) {
      if (!m.threadId || !m.resourceId) continue;
      const key = JSON.stringify([m.resourceId, m.threadId]);
      byThread.set(key, [...(byThread.get(key) ?? []), m]);
    }
    for (const [key, list] of byThread) {
      const [resourceId, threadId] = JSON.parse(key) as [string, string];
      const conversation = await this.conversation(resourceId, threadId);
      await conversation.record(toChatMessages(list));
    }
    return { messages };
  }

  /** The thread's transcript, oldest first, as Mastra messages (`perPage` newest ones when given). */
  async recall(args: {
    threadId: string | string[];
    resourceId?: string;
    perPage?: number | false;
  }): Promise<{
    messages: DbMessage[];
    total: number;
    page: number;
    perPage: number | false;
    hasMore: boolean;
  }> {
    const threadId = Array.isArray(args.threadId) ? args.threadId[0]! : args.threadId;
    const resourceId = args.resourceId ?? this.#resources.get(threadId);
    const empty = { messages: [], total: 0, page: 0, perPage: args.perPage ?? false, hasMore: false };
    if (resourceId === undefined) return empty;
    const session = await this.#session(resourceId, threadId, false);
    if (!session) return empty;
    const n = typeof args.perPage === 'number' ? args.perPage : 10_000;
    const entries = await this.kioku.stores.sessions.transcriptReadLast(
      this.#scope(resourceId),
      session.id,
      n,
    );
    const messages = entries
      .filter((e) => e.role === 'user' || e.role === 'assistant')
      .map((e) => dbMessage(e as ChatMessage, { threadId, resourceId, createdAt: new Date(e.ts) }));
    return { messages, total: messages.length, page: 0, perPage: args.perPage ?? false, hasMore: false };
  }

  async getWorkingMemory({ resourceId }: { threadId: string; resourceId?: string }): Promise<string | null> {
    if (resourceId === undefined) return null;
    return (await this.kioku.stores.working.get(this.#scope(resourceId), WORKING_MEMORY_KEY))?.value ?? null;
  }

  async getWorkingMemoryTemplate(): Promise<WorkingMemoryTemplate | null> {
    return null;
  }

  async updateWorkingMemory({
    resourceId,
    workingMemory,
  }: {
    threadId: string;
    resourceId?: string;
    workingMemory: string;
  }): Promise<void> {
    if (resourceId === undefined) {
      throw new UnsupportedError('KiokuMastraMemory keeps working memory per resource: pass resourceId.');
    }
    await this.kioku.stores.working.set(this.#scope(resourceId), WORKING_MEMORY_KEY, workingMemory, {
      ttlMs: MAX_TTL_MS,
    });
  }

  async __experimental_updateWorkingMemoryVNext(args: {
    threadId: string;
    resourceId?: string;
    workingMemory: string;
  }): Promise<{ success: boolean; reason: string }> {
    await this.updateWorkingMemory(args);
    return { success: true, reason: 'stored in Kioku working memory' };
  }

  async deleteMessages(): Promise<void> {
    throw new UnsupportedError(
      "Kioku's transcript is append-only: forget a whole thread with deleteThread (a receipt is kept) or a resource with forgetResource.",
    );
  }

  async cloneThread(): Promise<StorageCloneThreadOutput> {
    throw new UnsupportedError('KiokuMastraMemory does not clone threads.');
  }

  #scope(resourceId: string): { userId: string; agentId?: string } {
    return this.#agentId === undefined
      ? { userId: resourceId }
      : { userId: resourceId, agentId: this.#agentId };
  }

  async #session(resourceId: string, threadId: string, create: boolean): Promise<SessionInfo | undefined> {
    const key = JSON.stringify([resourceId, threadId]);
    const known = this.#sessions.get(key);
    if (known) return known;
    const scope = this.#scope(resourceId);
    const sessions = await this.kioku.stores.sessions.list(scope);
    let session = sessions.find((s) => s.metadata[THREAD_METADATA_KEY] === threadId);
    if (!session && create) {
      session = await this.kioku.stores.sessions.create(scope, {
        metadata: { [THREAD_METADATA_KEY]: threadId },
      });
    }
    if (session) {
      this.#resources.set(threadId, resourceId);
      this.#sessions.set(key, session);
    }
    return session;
  }

  async #thread(resourceId: string, session: SessionInfo): Promise<StorageThreadType> {
    const entry = await this.kioku.stores.sessions.kvGet(this.#scope(resourceId), session.id, THREAD_KV_KEY);
    const record = entry ? (JSON.parse(entry.value) as ThreadRecord) : undefined;
    return {
      id: String(session.metadata[THREAD_METADATA_KEY]),
      resourceId,
      ...(record?.title === undefined ? {} : { title: record.title }),
      ...(record?.metadata === undefined ? {} : { metadata: record.metadata }),
      createdAt: new Date(record?.createdAt ?? session.createdAt),
      updatedAt: new Date(record?.updatedAt ?? session.createdAt),
    };
  }
}
