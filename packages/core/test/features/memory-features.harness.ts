import { expect } from 'vitest';
import {
  type ChatMessage,
  type ChatModel,
  defaultTokenizer,
  type Kioku,
  type PreparedTurn,
  type ToolCall,
  type TurnLedger,
} from '../../src/index.js';
import { MEMORY_NOTICE } from '../../src/memory/trust/fence.js';
import { countMessagesTokens, countToolsTokens } from '../../src/model/messages.js';
import { toOpenAITool } from '../../src/model/tool.js';

/** A model that replays scripted replies and records the prompts it saw. */
export function scriptedModel(replies: ChatMessage[]): ChatModel & { prompts: ChatMessage[][] } {
  const prompts: ChatMessage[][] = [];
  return {
    prompts,
    async complete({ messages }) {
      prompts.push([...messages]);
      const reply = replies.shift();
      if (!reply) throw new Error('model script exhausted');
      return reply;
    },
  };
}

/** An assistant message calling tools; arguments given as objects are JSON-encoded, strings are sent as is. */
export function callTools(...calls: [name: string, args: unknown][]): ChatMessage {
  const toolCalls: ToolCall[] = calls.map(([name, args], i) => ({
    id: `call-${i}`,
    name,
    arguments: typeof args === 'string' ? args : JSON.stringify(args),
  }));
  return { role: 'assistant', content: '', toolCalls };
}

export const answer = (content = 'OK.'): ChatMessage => ({ role: 'assistant', content });

/** The tool results of a turn, parsed: `{ ok: content }` or `{ error: code }`. */
export function toolResults(messages: readonly ChatMessage[]): ({ ok: string } | { error: string })[] {
  return messages
    .filter((m) => m.role === 'tool')
    .map((m) => {
      try {
        const body = JSON.parse(m.content) as { error?: { code: string } };
        if (body && typeof body === 'object' && 'error' in body && body.error)
          return { error: body.error.code };
      } catch {}
      return { ok: m.content };
    });
}

/** The prompt never exceeds the budget and the ledger accounts for every token of it. */
export function expectLedgerAddsUp(turn: PreparedTurn, maxTokens: number): void {
  const { ledger, messages } = turn;
  // The whole prompt: messages and the tool definitions sent with them.
  expect(ledger.tools.tokens).toBe(countToolsTokens(defaultTokenizer, turn.tools));
  expect(ledger.totalTokens).toBe(countMessagesTokens(defaultTokenizer, messages) + ledger.tools.tokens);
  expect(ledger.totalTokens).toBe(
    ledger.baseTokens + ledger.tools.tokens + ledger.entries.reduce((s, e) => s + e.tokens, 0),
  );
  expect(ledger.totalTokens).toBeLessThanOrEqual(maxTokens);
  expect(ledger.maxTokens).toBe(maxTokens);
  for (const entry of ledger.entries) expect(entry.tokens).toBeLessThanOrEqual(entry.allottedTokens);
}

/** Items a ledger entry accounts for: included plus dropped, a group entry counting as its `count`. */
export function accountedFor(entry: { included: number; dropped: readonly { count?: number }[] }): number {
  return entry.included + entry.dropped.reduce((sum, d) => sum + (d.count ?? 1), 0);
}

/** The system messages a middleware injected (everything between the system prompt and the user message). */
/** The memory blocks of a prepared turn: system messages after the system prompt (or after `MEMORY_NOTICE` alone). */
export function injected(turn: PreparedTurn, systemPrompt = true): string[] {
  return turn.messages
    .slice(systemPrompt ? 1 : 0)
    .filter((m) => m.role === 'system' && m.content !== MEMORY_NOTICE)
    .map((m) => m.content);
}

export function entryOf(turn: { ledger: TurnLedger }, middleware: string) {
  const entry = turn.ledger.entries.find((e) => e.middleware === middleware);
  if (!entry) throw new Error(`no ledger entry for ${middleware}`);
  return entry;
}

/** Tokens of the tool definitions a built Kioku sends with every request (the budget pays for them first). */
export function toolTokensOf(kioku: Kioku): number {
  const tools = kioku.features.flatMap((feature) => feature.toolkit?.tools ?? []);
  return countToolsTokens(defaultTokenizer, [...new Set(tools)].map(toOpenAITool));
}
