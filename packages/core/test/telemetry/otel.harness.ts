import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

// Spans started inside a span are its children only with a context manager (what the SDK registers).
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

/** The official SDK with its in-memory exporters: what a test hands Kioku as `telemetry`. */
export function otel() {
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  // Exported only when the test collects (forceFlush), never on a timer.
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    spans,
    tracerProvider,
    meterProvider,
    /** Every data point of the metric `name` recorded so far: attributes and value. */
    async points(name: string): Promise<{ attributes: Record<string, unknown>; value: unknown }[]> {
      exporter.reset();
      await reader.forceFlush();
      const metrics = exporter.getMetrics().flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics));
      return metrics
        .filter((m) => m.descriptor.name === name)
        .flatMap((m) => m.dataPoints.map((p) => ({ attributes: { ...p.attributes }, value: p.value })));
    },
  };
}

/** A histogram point's sum and count, or a counter's / gauge's value as `sum` (count 1). */
export function sumOf(points: { value: unknown }[]): { sum: number; count: number } {
  let sum = 0;
  let count = 0;
  for (const { value } of points) {
    if (typeof value === 'number') {
      sum += value;
      count += 1;
    } else {
      const h = value as { sum: number; count: number };
      sum += h.sum;
      count += h.count;
    }
  }
  return { sum, count };
}

/** The span tree as indented names (children in start order), for a readable assertion. */
export function tree(
  spans: readonly ReadableSpan[],
  root: ReadableSpan,
  depth = 0,
  keep = (_: ReadableSpan) => true,
): string[] {
  const id = root.spanContext().spanId;
  const children = spans
    .filter((s) => s.parentSpanContext?.spanId === id && keep(s))
    .sort((a, b) => hrMs(a.startTime) - hrMs(b.startTime));
  return [`${'  '.repeat(depth)}${root.name}`, ...children.flatMap((c) => tree(spans, c, depth + 1, keep))];
}

function hrMs([s, ns]: [number, number]): number {
  return s * 1e3 + ns / 1e6;
}

/** Every attribute value of every span, as text (what a backend would store). */
export function attributeText(spans: readonly ReadableSpan[]): string {
  return spans
    .flatMap((s) => [
      s.name,
      ...Object.values(s.attributes).map(String),
      ...s.events.flatMap((e) => [e.name, ...Object.values(e.attributes ?? {}).map(String)]),
      s.status.message ?? '',
    ])
    .join('\n');
}
