import { z } from 'zod';
import { parseOrThrow } from '../../foundation/validation.js';
import { type ChatMessage, countMessagesTokens, countMessageTokens } from '../../model/messages.js';
import type { MemoryFeature } from '../../runtime/feature.js';
import type { PromptMiddleware } from '../../runtime/middleware.js';
import { splitTurns } from '../../runtime/transcript-turns.js';
import { SESSION_DEFAULTS } from '../../store/sessions/partitioned.js';
import type { TranscriptEntry } from '../../store/sessions/record.js';
import type { SessionStore } from '../../store/sessions/store.js';
import type { Tokenizer } from '../../tokens/tokenizer.js';
import { fitTurns } from './replay.js';
import { OLDER_TURNS, ReplayWindow } from './replay-window.js';

export const CONVERSATION_DEFAULTS = Object.freeze({
  /** The most turns replayed. */
  maxTurns: 20,
  /** Transcript entries read per turn: the session store's default transcript cap. */
  maxEntries: SESSION_DEFAULTS.transcriptCap,
});

interface CachedCount {
  content: string;
  toolCalls: TranscriptEntry['toolCalls'];
  tokens: number;
}

const ConversationHistoryOptionsSchema = z.object({
  maxTurns: z.number().int().min(1).max(10_000).default(CONVERSATION_DEFAULTS.maxTurns),
  maxEntries: z.number().int().min(1).max(100_000).default(CONVERSATION_DEFAULTS.maxEntries),
});

export interface ConversationHistoryOptions {
  /** Where the transcript lives (the same store the conversation records into). */
  sessions: SessionStore;
  /** Turns replayed at most (default 20). A turn is a user message and everything that answered it. */
  maxTurns?: number;
  /** Transcript entries read to find those turns (default 500, the store's default cap). */
  maxEntries?: number;
}

/**
 * Conversation replay: the last `maxTurns` turns of the session's
 * transcript go back into the prompt between the memory blocks and the user message, trimmed to the
 * middleware's tokens by dropping the oldest whole turns. A tool call is never separated from its result.
 */
export function conversationHistory(options: ConversationHistoryOptions): MemoryFeature {
  const { maxTurns, maxEntries } = parseOrThrow(
    ConversationHistoryOptionsSchema,
    { maxTurns: options.maxTurns, maxEntries: options.maxEntries },
    'conversation history options',
  );
  const { sessions } = options;
  // Tokens of each transcript entry's message, per tokenizer: the same entries are read (and every
  // turn in the read window counted) turn after turn, and BPE counting was most of this middleware's
  // cost. Entries are immutable records (frozen by the partitioned stores); a store that hands out new
  // objects per read just misses the cache, and a hit is checked against the entry's content and calls.
  const cache = new WeakMap<Tokenizer, WeakMap<TranscriptEntry, CachedCount>>();
  const window = new ReplayWindow(sessions, maxTurns, maxEntries);
  const middleware: PromptMiddleware = {
    name: 'conversation',
    placement: 'history',
    prefetch: (ctx) => window.read(ctx.scope, ctx.sessionId),
    async inject(ctx) {
      const { entries, cut } = await ((ctx.prefetched as ReturnType<ReplayWindow['read']> | undefined) ??
        window.read(ctx.scope, ctx.sessionId));
      const origin = new Map<ChatMessage, TranscriptEntry>();
      const { turns, orphans } = splitTurns(entries, origin);
      let counts = cache.get(ctx.tokenizer);
      if (!counts) {
        counts = new WeakMap();
        cache.set(ctx.tokenizer, counts);
      }
      const known = counts;
      const count = (messages: readonly ChatMessage[]) => {
        let total = 0;
        for (const message of messages) {
          const entry = origin.get(message);
          const hit = entry === undefined ? undefined : known.get(entry);
          if (hit !== undefined && hit.content === entry!.content && hit.toolCalls === entry!.toolCalls) {
            total += hit.tokens;
            continue;
          }
          // A message pairToolCalls rebuilt (calls removed) is not its entry's: count it as it is.
          const tokens = countMessageTokens(ctx.tokenizer, message);
          if (entry !== undefined)
            known.set(entry, { content: entry.content, toolCalls: entry.toolCalls, tokens });
          total += tokens;
        }
        return total;
      };
      // Turn indexes count back from the current turn, so they stay right after the cap evicted entries.
      const first = Math.max(0, ctx.turnIndex - turns.length);
      const result = fitTurns(
        turns.map((messages, i) => ({ index: first + i, messages })),
        maxTurns,
        ctx.maxTokens,
        ctx.tokenizer,
        count,
      );
      if (cut) {
        // The turns before the window were not read: one entry stands for them (evicted ones included).
        const older = first;
        if (older === 0) return result;
        return {
          ...result,
          dropped: [{ id: OLDER_TURNS, reason: 'limit', count: older }, ...result.dropped],
        };
      }
      if (orphans.length === 0) return result;
      const partial = {
        id: 'partial-turn',
        reason: 'limit' as const,
        tokens: countMessagesTokens(ctx.tokenizer, orphans),
      };
      return { ...result, dropped: [partial, ...result.dropped] };
    },
  };
  return { name: 'conversation', middleware };
}
