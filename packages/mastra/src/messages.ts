import { randomUUID } from 'node:crypto';
import type { ChatMessage } from '@kioku/core';
import type { MastraDBMessage } from '@mastra/core/agent/message-list';

export type DbMessage = MastraDBMessage;

/** The text of a Mastra message: its text parts (or its plain `content`), joined. */
export function messageText(message: DbMessage): string {
  const parts = message.content.parts ?? [];
  const text = parts
    .map((part) => (part.type === 'text' ? (part as { text: string }).text : ''))
    .filter((t) => t !== '')
    .join('\n');
  return text !== '' ? text : typeof message.content.content === 'string' ? message.content.content : '';
}

/** Kioku's messages (the transcript's shape) for Mastra's user and assistant messages, by their text. */
export function toChatMessages(messages: readonly DbMessage[]): ChatMessage[] {
  return messages.flatMap((m): ChatMessage[] => {
    if (m.role !== 'user' && m.role !== 'assistant') return [];
    const content = messageText(m);
    return content === '' ? [] : [{ role: m.role, content }];
  });
}

/** A Mastra message for one of Kioku's (a replayed turn, a transcript entry). */
export function dbMessage(
  message: ChatMessage,
  where: { threadId: string; resourceId: string; createdAt?: Date },
): DbMessage {
  return {
    id: `kioku-${randomUUID()}`,
    role: message.role === 'assistant' ? 'assistant' : message.role === 'system' ? 'system' : 'user',
    createdAt: where.createdAt ?? new Date(),
    threadId: where.threadId,
    resourceId: where.resourceId,
    content: { format: 2, parts: [{ type: 'text', text: message.content }] },
  };
}
