import type { Tokenizer } from '../../tokenizer.js';
import { type ChatMessage, countMessagesTokens } from '../../turn/messages.js';
import type { DroppedItem, MiddlewareResult } from '../../turn/middleware.js';

export interface NumberedTurn {
  /** The turn's index in the session (0 = first turn), named `turn-<index>` in the ledger. */
  index: number;
  messages: ChatMessage[];
}

/**
 * Choose the turns to replay: at most `maxTurns` of the newest, then, newest first, as many as fit in
 * `maxTokens`. Whole turns only, and always a contiguous run ending at the newest turn: once a turn does
 * not fit, every older one is dropped too, so the model never sees a history with a hole in it.
 * `count` gives a turn's tokens (by default `countMessagesTokens`; the feature passes a cached count).
 */
export function fitTurns(
  turns: readonly NumberedTurn[],
  maxTurns: number,
  maxTokens: number,
  tokenizer: Tokenizer,
  count: (messages: readonly ChatMessage[]) => number = (messages) =>
    countMessagesTokens(tokenizer, messages),
): MiddlewareResult {
  const chosen: NumberedTurn[] = [];
  const dropped: DroppedItem[] = [];
  let used = 0;
  let full = false;
  for (let k = 0; k < turns.length; k++) {
    const turn = turns[turns.length - 1 - k]!;
    const tokens = count(turn.messages);
    const id = `turn-${turn.index}`;
    if (k >= maxTurns) dropped.push({ id, reason: 'limit', tokens });
    else if (!full && used + tokens <= maxTokens) {
      chosen.push(turn);
      used += tokens;
    } else {
      full = true;
      dropped.push({ id, reason: 'budget', tokens });
    }
  }
  chosen.reverse();
  dropped.reverse();
  return { messages: chosen.flatMap((t) => t.messages), included: chosen.length, dropped };
}
