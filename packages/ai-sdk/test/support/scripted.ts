import { createInMemoryStores, KiokuBuilder, type KiokuStores } from '@kioku/core';
import * as aiTest from 'ai/test';
import { type MockLanguageModelV3, simulateReadableStream } from 'ai/test';
import { kiokuMemory } from '../../src/index.js';

type GenerateResult = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>;
type StreamResult = Awaited<ReturnType<MockLanguageModelV3['doStream']>>;
type StreamPart = StreamResult['stream'] extends ReadableStream<infer P> ? P : never;

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/** A model reply with text only. */
export function reply(text: string): GenerateResult {
  return {
    content: [{ type: 'text', text }],
    finishReason: { unified: 'stop', raw: 'stop' },
    usage,
    warnings: [],
  };
}

/** A model reply that calls tools. */
export function callTools(...calls: { id: string; name: string; input: unknown }[]): GenerateResult {
  return {
    content: calls.map((c) => ({
      type: 'tool-call' as const,
      toolCallId: c.id,
      toolName: c.name,
      input: JSON.stringify(c.input),
    })),
    finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    usage,
    warnings: [],
  };
}

/** The stream parts of a reply: text in several deltas, or tool calls. */
export function streamed(result: GenerateResult, deltas?: string[]): StreamPart[] {
  const parts: StreamPart[] = [{ type: 'stream-start', warnings: [] }];
  for (const part of result.content) {
    if (part.type === 'text') {
      parts.push({ type: 'text-start', id: 't' });
      for (const delta of deltas ?? [part.text]) parts.push({ type: 'text-delta', id: 't', delta });
      parts.push({ type: 'text-end', id: 't' });
    } else if (part.type === 'tool-call') parts.push(part);
  }
  parts.push({ type: 'finish', finishReason: result.finishReason, usage: result.usage });
  return parts;
}

/** The AI SDK's mock model of its own specification: v4 in AI SDK 7, v3 in AI SDK 6 (same options). */
const MockLanguageModel = (
  'MockLanguageModelV4' in aiTest ? aiTest.MockLanguageModelV4 : aiTest.MockLanguageModelV3
) as typeof MockLanguageModelV3;

/**
 * The AI SDK's mock model answering from a script, one result per call (`doGenerate`) or the same
 * results as streams (`doStream`); the calls it got are in `doGenerateCalls` / `doStreamCalls`.
 */
export function scriptedModel(script: GenerateResult[], options: { deltas?: string[] } = {}) {
  const generate = [...script];
  const stream = [...script];
  return new MockLanguageModel({
    doGenerate: async () => {
      const next = generate.shift();
      if (!next) throw new Error('model script exhausted');
      return next;
    },
    doStream: async () => {
      const next = stream.shift();
      if (!next) throw new Error('model script exhausted');
      return { stream: simulateReadableStream<StreamPart>({ chunks: streamed(next, options.deltas) }) };
    },
  });
}

/** A Kioku stack with the user's facts (mode `all`), plan mode, working memory and offload over in-memory stores. */
export function memoryStack(
  options: { maxTokens?: number; stores?: KiokuStores; systemPrompt?: string } = {},
) {
  const stores = options.stores ?? createInMemoryStores();
  const kioku = new KiokuBuilder({
    stores,
    systemPrompt: options.systemPrompt ?? 'You are a test agent with memory.',
    budget: { maxTokens: options.maxTokens ?? 16_000 },
  })
    .withFacts()
    .withPlanMode()
    .withWorkingMemory()
    .withToolOutputOffload({ thresholdTokens: 60 })
    .build();
  return {
    stores,
    kioku,
    async memoryFor(userId: string) {
      const conversation = await kioku.startConversation({ userId });
      return kiokuMemory(conversation);
    },
  };
}

/** A page of `lines` numbered lines (about 8 tokens each). */
export const page = (lines: number) =>
  Array.from({ length: lines }, (_, i) => `Line ${i}: the quarterly report lists revenue by region.`).join(
    '\n',
  );

/** The text of every system message of a prompt. */
export function systemText(prompt: readonly { role: string; content: unknown }[]): string {
  return prompt
    .filter((m) => m.role === 'system')
    .map((m) => String(m.content))
    .join('\n');
}

/** The text of the first tool result in a prompt message (empty when it has none). */
export function toolResultText(message: { role: string; content: unknown } | undefined): string {
  if (message?.role !== 'tool' || !Array.isArray(message.content)) return '';
  const part = message.content.find((p: { type: string }) => p.type === 'tool-result');
  return String((part as { output?: { value?: unknown } } | undefined)?.output?.value ?? '');
}
