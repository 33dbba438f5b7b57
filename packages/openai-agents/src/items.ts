import type { ChatMessage } from '@kioku/core';
import type { AgentInputItem } from '@openai/agents';

/** An item as far as Kioku reads it (every `AgentInputItem` has a `type`, a `role`, or both). */
interface ItemLike {
  type?: string;
  role?: string;
  content?: unknown;
  [key: string]: unknown;
}

function textOfParts(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: ItemLike) => {
      if (typeof part?.text === 'string') return part.text;
      if (typeof part?.refusal === 'string') return part.refusal;
      return '';
    })
    .filter((text) => text !== '')
    .join('\n');
}

function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return textOfParts(output);
  const part = output as ItemLike | undefined;
  if (part?.type === 'text' && typeof part.text === 'string') return part.text;
  return JSON.stringify(output ?? null);
}

/** Whether an item is a user message (the start of a turn). */
export function isUserMessage(item: AgentInputItem): boolean {
  const it = item as ItemLike;
  return it.role === 'user' && (it.type === undefined || it.type === 'message');
}

/** The text of a user message item. */
export function userText(item: AgentInputItem): string {
  return textOfParts((item as ItemLike).content);
}

/**
 * Kioku's messages (the transcript's shape) for Agents SDK items: user and assistant messages, function
 * calls (folded into the assistant message before them) and their results. Reasoning, hosted tool calls
 * and other items are left out.
 */
export function toChatMessages(items: readonly AgentInputItem[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const item of items as readonly ItemLike[]) {
    if (item.type === 'function_call') {
      const call = {
        id: String(item.callId),
        name: String(item.name),
        arguments: String(item.arguments ?? ''),
      };
      const last = out.at(-1);
      if (last?.role === 'assistant') last.toolCalls = [...(last.toolCalls ?? []), call];
      else out.push({ role: 'assistant', content: '', toolCalls: [call] });
    } else if (item.type === 'function_call_result') {
      out.push({
        role: 'tool',
        content: outputText(item.output),
        toolCallId: String(item.callId),
        name: String(item.name),
      });
    } else if (item.type === undefined || item.type === 'message') {
      if (item.role === 'user' || item.role === 'assistant' || item.role === 'system') {
        out.push({ role: item.role, content: textOfParts(item.content) });
      }
    }
  }
  return out;
}
