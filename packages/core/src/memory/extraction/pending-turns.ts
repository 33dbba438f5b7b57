import { isoAt, systemClock } from '../../foundation/clock.js';
import type { ModelUsage } from '../../model/chat-model.js';
import type { ChatMessage } from '../../model/messages.js';
import { sumUsage } from '../../model/structured.js';
import { compareTexts } from '../../store/facts/near-duplicate.js';
import { type ChangeOperation, newChangeset } from '../changesets/changeset.js';
import { ChangesetLog, type PassResult } from '../changesets/changeset-log.js';
import type { Exchange } from './exchange.js';
import { type ExtractOptions, extractAndStoreFacts } from './extract.js';

/** The options of one extraction pass over a session's pending turns. */
export type PendingTurnsOptions = Omit<ExtractOptions, 'messages' | 'turn'> & {
  sessionId: string;
  /** The turns read, oldest first, each with its number in the session. */
  exchanges: ReadonlyArray<{ turn: number; exchange: Exchange }>;
};

/**
 * The one place the outbox calls extraction: one changeset for all the exchanges of a pass (with
 * `apply: false`, the drain applies it once its watermark is written).
 *
 * For now each exchange is extracted on its own (`extractAndStoreFacts`, one or two model calls each)
 * and the operations are joined; a create that repeats an earlier one of the pass is dropped. A batched
 * extraction (one model call for all the exchanges) replaces this body.
 */
export async function extractPendingTurns(options: PendingTurnsOptions): Promise<PassResult> {
  const { exchanges, ...rest } = options;
  const operations: ChangeOperation[] = [];
  const usages: ModelUsage[] = [];
  const notes: string[] = [];
  for (const { turn, exchange } of exchanges) {
    options.signal?.throwIfAborted();
    const messages: ChatMessage[] = [{ role: 'user', content: exchange.user }];
    if (exchange.answer !== undefined) messages.push({ role: 'assistant', content: exchange.answer });
    const { changeset } = await extractAndStoreFacts({ ...rest, turn, messages, apply: false });
    if (changeset.usage) usages.push(changeset.usage);
    notes.push(...(changeset.notes ?? []));
    for (const op of changeset.operations) {
      const repeated =
        op.op === 'create' &&
        operations.some(
          (o) => o.op === 'create' && compareTexts(o.after.content, op.after.content).decision === 'skipped',
        );
      if (repeated) notes.push(`A fact repeats one of an earlier turn of the pass and was dropped.`);
      else operations.push(op);
    }
  }
  const changeset = newChangeset('extraction', options.scope, operations, {
    createdAt: isoAt(options.clock ?? systemClock),
    ...(usages.length > 0 ? { usage: sumUsage(usages) } : {}),
    notes,
  });
  if (options.apply === false || operations.length === 0) return { changeset };
  const log = options.changesets ?? new ChangesetLog(options.stores.sessions);
  return log.apply(options.stores.facts, options.scope, changeset, isoAt(options.clock ?? systemClock));
}
