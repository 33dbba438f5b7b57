import type { Conversation, TurnLedger } from '@kioku/core';
import type {
  ProcessInputArgs,
  ProcessInputResult,
  ProcessOutputResultArgs,
  Processor,
} from '@mastra/core/processors';
import type { RequestContext } from '@mastra/core/request-context';
import { dbMessage, messageText } from './messages.js';

/** The thread and resource of the run, as Mastra's agent puts them in the request context for its memory. */
function runThread(
  requestContext: RequestContext | undefined,
): { threadId: string; resourceId: string } | undefined {
  const memory = requestContext?.get('MastraMemory') as
    | { thread?: { id?: string }; resourceId?: string }
    | undefined;
  const threadId = memory?.thread?.id;
  const resourceId = memory?.resourceId;
  return threadId && resourceId ? { threadId, resourceId } : undefined;
}

/** Where the processors find a thread's Kioku conversation (`KiokuMastraMemory`). */
export interface ThreadConversations {
  conversation(resourceId: string, threadId: string): Promise<Conversation>;
}

/** The user message each run's turn was prepared for, by the run's message list (one per run). */
const preparedFor = new WeakMap<object, string>();
/** The ledger of the turn a conversation prepared last. */
const ledgers = new WeakMap<Conversation, TurnLedger>();

/** The ledger (tokens per memory kind) of the turn the conversation prepared last, if any. */
export function lastLedger(conversation: Conversation): TurnLedger | undefined {
  return ledgers.get(conversation);
}

/**
 * Before the model: Kioku's context for the user's message — the system prompt and memory blocks after
 * the agent's own system messages, the thread's replayed turns (Kioku's conversation replay) before the
 * new message. Without a thread and resource (a run without `memory: { thread, resource }`) it does nothing.
 */
export class KiokuContextProcessor implements Processor<'kioku-context'> {
  readonly id = 'kioku-context';
  readonly name = 'Kioku context';
  readonly #memory: ThreadConversations;

  constructor(memory: ThreadConversations) {
    this.#memory = memory;
  }

  async processInput(args: ProcessInputArgs): Promise<ProcessInputResult> {
    const { messages, requestContext, messageList } = args;
    const run = runThread(requestContext);
    const last = messages.findLast((m) => m.role === 'user');
    if (!run || !last) return messageList;
    const conversation = await this.#memory.conversation(run.resourceId, run.threadId);
    const prepared = await conversation.prepare(messageText(last));
    preparedFor.set(messageList, messageText(last));
    ledgers.set(conversation, prepared.ledger);
    // The replayed turns go in as memory, as Mastra's own message history adds them: input messages
    // would count as the run's response (their text in the answer). The list orders by time, so they
    // are dated just before the user's message.
    const at = new Date(last.createdAt ?? Date.now()).getTime();
    const n = prepared.history.length;
    prepared.history.forEach((m, i) => {
      messageList.add(dbMessage(m, { ...run, createdAt: new Date(at - (n - i)) }), 'memory');
    });
    messageList.addSystem(
      prepared.system.map((m) => ({ role: 'system' as const, content: m.content })),
      'kioku',
    );
    return messageList;
  }
}

/** After the model: the exchange (user message, answer) recorded in the thread's Kioku transcript. */
export class KiokuRecordProcessor implements Processor<'kioku-record'> {
  readonly id = 'kioku-record';
  readonly name = 'Kioku record';
  readonly #memory: ThreadConversations;

  constructor(memory: ThreadConversations) {
    this.#memory = memory;
  }

  async processOutputResult(args: ProcessOutputResultArgs) {
    const { messages, requestContext, result } = args;
    const run = runThread(requestContext);
    // The run's output messages hold only the answer: the user's message is the one the context
    // processor prepared the turn for.
    const userMessage = preparedFor.get(args.messageList);
    if (!run || userMessage === undefined || !result.text) return messages;
    const conversation = await this.#memory.conversation(run.resourceId, run.threadId);
    await conversation.record([
      { role: 'user', content: userMessage },
      { role: 'assistant', content: result.text },
    ]);
    return messages;
  }
}
