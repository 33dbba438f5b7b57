import { createInMemoryStores, KiokuBuilder } from '@kioku/core';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { generateText, stepCountIs, wrapLanguageModel } from 'ai';
import { describe, expect, inject, it } from 'vitest';
import { kiokuMemory } from '../src/index.js';
import { callTools, reply, scriptedModel } from './support/scripted.js';

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

/** The span tree under `root` as indented names, children in start order. */
function tree(spans: readonly ReadableSpan[], root: ReadableSpan, depth = 0): string[] {
  const children = spans
    .filter(
      (s) => s.parentSpanContext?.spanId === root.spanContext().spanId && !s.attributes['kioku.store.kind'],
    )
    .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
  return [`${'  '.repeat(depth)}${root.name}`, ...children.flatMap((c) => tree(spans, c, depth + 1))];
}

describe('Kioku spans inside the AI SDK’s telemetry', () => {
  it('nest under the app’s generateText: prepare in the first model call, the tool in its step, record in the last', async () => {
    const exporter = new InMemorySpanExporter();
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const stores = createInMemoryStores();
    await stores.facts.create({ userId: 'alice' }, { content: 'Lives in Lisbon' });
    const kioku = new KiokuBuilder({ stores, telemetry: { tracerProvider } }).withFacts().build();
    const memory = kiokuMemory(await kioku.startConversation({ userId: 'alice' }));
    const mock = scriptedModel([
      callTools({
        id: 't1',
        name: 'create_memory',
        input: { title: 'Pet', content: 'Has a cat named Miso' },
      }),
      reply('Noted: you live in Lisbon and have a cat.'),
    ]);
    const tracer = tracerProvider.getTracer('app');
    await tracer.startActiveSpan('app.request', async (span) => {
      await generateText({
        model: wrapLanguageModel({ model: mock, middleware: memory.middleware }),
        tools: memory.tools,
        prompt: 'I have a cat named Miso.',
        stopWhen: stepCountIs(3),
        experimental_telemetry: { isEnabled: true, tracer },
      });
      span.end();
    });

    const spans = exporter.getFinishedSpans();
    const root = spans.find((s) => s.name === 'app.request')!;
    // AI SDK 6 emits its own spans (ai.generateText, doGenerate, toolCall) and Kioku's nest in them; AI SDK 7
    // emits none through experimental_telemetry, so Kioku's nest directly in the app's span, in the same order.
    const aiSdkSpans = spans.some((s) => s.name === 'ai.generateText');
    expect(tree(spans, root)).toEqual(
      aiSdkSpans
        ? [
            'app.request',
            '  ai.generateText',
            '    ai.generateText.doGenerate',
            '      kioku.prepare',
            '    ai.toolCall',
            '      execute_tool create_memory',
            '    ai.generateText.doGenerate',
            '      kioku.record',
          ]
        : ['app.request', '  kioku.prepare', '  execute_tool create_memory', '  kioku.record'],
    );
    expect(aiSdkSpans).toBe(inject('aiSdk') === 'ai@6');
    // The turn's spans are all in the app's trace (only startConversation's session write was before it).
    const ms = ([sec, ns]: [number, number]) => sec * 1e3 + ns / 1e6;
    const turn = spans.filter((s) => ms(s.startTime) >= ms(root.startTime) && s.name !== 'app.request');
    expect(turn.length).toBeGreaterThanOrEqual(tree(spans, root).length - 1);
    for (const span of turn) expect(span.spanContext().traceId).toBe(root.spanContext().traceId);
    // The memory stages' ledger entries are lists on kioku.prepare (the default detail).
    const prepare = spans.find((s) => s.name === 'kioku.prepare')!;
    expect(prepare.attributes['kioku.stages']).toEqual(['facts']);
    expect(prepare.attributes['kioku.stage.included']).toEqual([1]);
  });
});
