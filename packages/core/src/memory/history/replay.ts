import { type ChatMessage, countMessagesTokens } from '../../model/messages.js';
import type { DroppedItem, MiddlewareResult } from '../../runtime/middleware.js';
import type { Tokenizer } from '../../tokens/tokenizer.js';

export interface NumberedTurn {
  /** The turn's index in the session (0 = first turn), named `turn-<index>` in the ledger. */
  index: number;
  messages: ChatMessage[];
}

/**
 * Choose the turns to replay: at most `maxTurns` of the newest, then, newest first, as many as fit in
 * `maxTokens`. A turn that does not fit is tried once more with its large tool results shrunk
 * (`shrinkToolResults`, ledger reason `shrunk`). Whole turns only, and always a contiguous run ending at the
 * newest turn: once a turn does not fit, every older one is dropped too, so the model never sees a history
 * with a hole in it.
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
    if (k >= maxTurns) {
      dropped.push({ id, reason: 'limit', tokens });
      continue;
    }
    if (!full && used + tokens <= maxTokens) {
      chosen.push(turn);
      used += tokens;
      continue;
    }
    // Before a turn goes, its tool results shrink: one large old output must not cost every earlier turn.
    const shrunk = full ? undefined : shrinkToolResults(turn.messages, tokenizer);
    const shrunkTokens = shrunk ? count(shrunk) : Number.POSITIVE_INFINITY;
    if (shrunk && used + shrunkTokens <= maxTokens) {
      chosen.push({ ...turn, messages: shrunk });
      used += shrunkTokens;
      dropped.push({ id: `${id}/tool-results`, reason: 'shrunk', tokens: tokens - shrunkTokens });
      continue;
    }
    full = true;
    dropped.push({ id, reason: 'budget', tokens });
  }
  chosen.reverse();
  dropped.reverse();
  return { messages: chosen.flatMap((t) => t.messages), included: chosen.length, dropped };
}

/** A replayed tool result longer than this keeps only its MemoryRef placeholders, or its beginning. */
export const REPLAYED_TOOL_RESULT_TOKENS = 100;
const MEMORY_REF = /\[MemoryRef: [^\]\n]*\]/g;

/**
 * `messages` with every tool result over REPLAYED_TOOL_RESULT_TOKENS cut down: to the `[MemoryRef: …]`
 * placeholders it holds (the model can retrieve the rest), else to its first tokens and a note saying how
 * much was left out. Tool calls and their results stay paired. Undefined when nothing was large enough.
 */
export function shrinkToolResults(
  messages: readonly ChatMessage[],
  tokenizer: Tokenizer,
): ChatMessage[] | undefined {
  let changed = false;
  const out = messages.map((message) => {
    if (message.role !== 'tool') return message;
    const tokens = tokenizer.count(message.content);
    if (tokens <= REPLAYED_TOOL_RESULT_TOKENS) return message;
    changed = true;
    const refs = message.content.match(MEMORY_REF);
    const content = refs
      ? `${refs.join('\n')}\n[older tool output shortened for the replay; retrieve_memory returns it in full]`
      : `${tokenizer.truncate(message.content, REPLAYED_TOOL_RESULT_TOKENS)}\n[… ${tokens - REPLAYED_TOOL_RESULT_TOKENS} more tokens of this tool output left out of the replay]`;
    return { ...message, content };
  });
  return changed ? out : undefined;
}
