import type { ChatMessage, ToolCall } from '@kioku/core';

/**
 * A message of an AI SDK prompt as Kioku writes it: the language-model prompt of the provider
 * specification (v3 in AI SDK 6, v4 in AI SDK 7), whose messages the SDK's `ModelMessage`s resemble.
 */
export type PromptMessage =
  | { role: 'system'; content: string }
  | { role: 'user' | 'assistant' | 'tool'; content: PromptPart[] };

/** A content part: text, file, reasoning, tool call, tool result … */
export interface PromptPart {
  type: string;
  [key: string]: unknown;
}

/**
 * Any AI SDK message Kioku reads: a prompt message or a `ModelMessage` (whose content may be a string).
 * Parts other than text, tool calls and tool results are left out.
 */
export interface MessageLike {
  role: string;
  content: unknown;
}

/** What a tool result part carries (`ToolResultOutput`). */
interface ToolOutput {
  type: string;
  value?: unknown;
  reason?: string;
}

function partsOf(content: unknown): PromptPart[] {
  return Array.isArray(content) ? (content as PromptPart[]) : [];
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  return partsOf(content)
    .filter((p) => p.type === 'text' && typeof p.text === 'string')
    .map((p) => p.text as string)
    .join('\n');
}

/** The text a model was given for a tool's result. */
export function toolOutputText(output: ToolOutput | undefined): string {
  if (!output) return '';
  switch (output.type) {
    case 'text':
    case 'error-text':
      return String(output.value ?? '');
    case 'json':
    case 'error-json':
      return JSON.stringify(output.value ?? null);
    case 'execution-denied':
      return `Execution denied${output.reason ? `: ${output.reason}` : '.'}`;
    case 'content':
      return Array.isArray(output.value)
        ? (output.value as PromptPart[])
            .map((p) => (p.type === 'text' ? String(p.text ?? '') : `[${p.type}]`))
            .join('\n')
        : '';
    default:
      return JSON.stringify(output);
  }
}

function inputText(input: unknown): string {
  return typeof input === 'string' ? input : JSON.stringify(input ?? {});
}

/** Client-side tool calls of an assistant's parts (calls a provider ran itself need no result from us). */
export function toolCallsOf(parts: readonly PromptPart[]): ToolCall[] {
  return parts
    .filter((p) => p.type === 'tool-call' && p.providerExecuted !== true)
    .map((p) => ({ id: String(p.toolCallId), name: String(p.toolName), arguments: inputText(p.input) }));
}

/** An assistant message from a model's generated content (`text` and `tool-call` parts). */
export function assistantMessage(parts: readonly PromptPart[]): ChatMessage {
  const toolCalls = toolCallsOf(parts);
  return {
    role: 'assistant',
    content: textOf([...parts]),
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
  };
}

/**
 * Kioku's messages (the transcript's shape) for AI SDK messages: text parts are joined, files and
 * reasoning are left out, each tool result becomes a `tool` message.
 */
export function toChatMessages(messages: readonly MessageLike[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'system':
      case 'user':
        out.push({ role: message.role, content: textOf(message.content) });
        break;
      case 'assistant':
        out.push(
          typeof message.content === 'string'
            ? { role: 'assistant', content: message.content }
            : assistantMessage(partsOf(message.content)),
        );
        break;
      case 'tool':
        for (const part of partsOf(message.content)) {
          if (part.type !== 'tool-result') continue;
          out.push({
            role: 'tool',
            content: toolOutputText(part.output as ToolOutput | undefined),
            toolCallId: String(part.toolCallId),
            name: String(part.toolName),
          });
        }
        break;
    }
  }
  return out;
}

function parsedInput(args: string): unknown {
  try {
    return args.trim() === '' ? {} : JSON.parse(args);
  } catch {
    return args;
  }
}

/** Kioku's prompt messages (system prompt, memory blocks, replayed turns) as language-model prompt messages. */
export function toPromptMessages(messages: readonly ChatMessage[]): PromptMessage[] {
  const out: PromptMessage[] = [];
  for (const m of messages) {
    if (m.role === 'system') out.push({ role: 'system', content: m.content });
    else if (m.role === 'user') out.push({ role: 'user', content: [{ type: 'text', text: m.content }] });
    else if (m.role === 'assistant') {
      const parts: PromptPart[] = m.content ? [{ type: 'text', text: m.content }] : [];
      for (const call of m.toolCalls ?? []) {
        parts.push({
          type: 'tool-call',
          toolCallId: call.id,
          toolName: call.name,
          input: parsedInput(call.arguments),
        });
      }
      out.push({ role: 'assistant', content: parts });
    } else {
      const part: PromptPart = {
        type: 'tool-result',
        toolCallId: m.toolCallId ?? '',
        toolName: m.name ?? '',
        output: { type: 'text', value: m.content },
      };
      const last = out.at(-1);
      // Results of one step's calls go together in one tool message, as the AI SDK sends them.
      if (last?.role === 'tool' && Array.isArray(last.content)) last.content.push(part);
      else out.push({ role: 'tool', content: [part] });
    }
  }
  return out;
}
