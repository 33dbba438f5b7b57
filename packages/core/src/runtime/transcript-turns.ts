import type { ChatMessage } from '../model/messages.js';
import type { TranscriptEntry } from '../store/sessions/record.js';

/** The transcript read back as turns; each turn starts at a `user` entry. */
export interface SplitTranscript {
  turns: ChatMessage[][];
  /**
   * Entries before the first `user` entry: the tail of a turn whose beginning the transcript cap (or the
   * read window) cut off. They are never replayed — a `tool` result without its call is invalid.
   */
  orphans: ChatMessage[];
}

/** A transcript entry as a chat message (without its timestamp). */
export function toChatMessage(entry: TranscriptEntry): ChatMessage {
  const message: ChatMessage = { role: entry.role, content: entry.content };
  if (entry.toolCalls?.length) message.toolCalls = entry.toolCalls.map((c) => ({ ...c }));
  if (entry.toolCallId !== undefined) message.toolCallId = entry.toolCallId;
  if (entry.name !== undefined) message.name = entry.name;
  return message;
}

/**
 * Group transcript entries into turns. `origin`, when given, receives each message built and the entry
 * it was built from (pairToolCalls returns an unchanged message as the same object, so a message still
 * found there after pairing is exactly `toChatMessage(entry)`).
 */
export function splitTurns(
  entries: readonly TranscriptEntry[],
  origin?: Map<ChatMessage, TranscriptEntry>,
): SplitTranscript {
  const turns: ChatMessage[][] = [];
  const orphans: ChatMessage[] = [];
  for (const entry of entries) {
    const message = toChatMessage(entry);
    origin?.set(message, entry);
    if (message.role === 'user') turns.push([message]);
    else if (turns.length > 0) turns.at(-1)!.push(message);
    else orphans.push(message);
  }
  // Most turns hold no tool exchange: pairing them would only copy them.
  return { turns: turns.map((turn) => (turn.some(hasToolPart) ? pairToolCalls(turn) : turn)), orphans };
}

/** A tool result, or an assistant message that calls tools: what `pairToolCalls` may change. */
function hasToolPart(message: ChatMessage): boolean {
  return message.role === 'tool' || (message.toolCalls?.length ?? 0) > 0;
}

/**
 * Keep every tool exchange whole, as chat APIs require: an assistant message's tool calls must be
 * answered by the `tool` messages that directly follow it. A `tool` message that answers no open call
 * is dropped; a call left without an answer (a turn interrupted mid-tool) is removed from its assistant
 * message, and the message too when nothing else is left in it.
 */
export function pairToolCalls(messages: readonly ChatMessage[]): ChatMessage[] {
  const keep = new Set<number>();
  const answered = new Map<number, Set<string>>();
  let open: { at: number; ids: Set<string> } | undefined;
  messages.forEach((message, i) => {
    if (message.role === 'tool') {
      const id = message.toolCallId;
      if (open && id !== undefined && open.ids.delete(id)) {
        answered.get(open.at)!.add(id);
        keep.add(i);
      }
      return;
    }
    keep.add(i);
    open = undefined;
    if (message.role === 'assistant' && message.toolCalls?.length) {
      open = { at: i, ids: new Set(message.toolCalls.map((c) => c.id)) };
      answered.set(i, new Set());
    }
  });
  const out: ChatMessage[] = [];
  messages.forEach((message, i) => {
    if (!keep.has(i)) return;
    const done = answered.get(i);
    if (!done) {
      out.push(message);
      return;
    }
    const toolCalls = message.toolCalls!.filter((c) => done.has(c.id));
    if (toolCalls.length === message.toolCalls!.length) out.push(message);
    else if (toolCalls.length > 0) out.push({ ...message, toolCalls });
    else if (message.content.trim() !== '') {
      const { toolCalls: _unanswered, ...rest } = message;
      out.push(rest);
    }
  });
  return out;
}
