/**
 * `pnpm bench:turn --telemetry`: what OpenTelemetry costs a turn. Three Kioku stacks with the same
 * features and data (the builder's `withFacts`, `withKnowledge`, `withPlanMode`, `withMemory`, relevant
 * memory; N facts, 100 documents, a 200-turn thread) run `prepare` + `record` side by side, turn by turn in
 * rotating order (so load on a shared machine falls on all three alike):
 *
 *   off        no SDK registered: Kioku resolves no telemetry and wraps nothing;
 *   sdk-noop   the official SDK (tracer and meter providers, an AsyncLocalStorage context manager) with a
 *              batch span processor and a metric reader whose exporters drop everything: the cost of
 *              making the spans and recording the metrics;
 *   sdk-otlp   the same with the OTLP/HTTP exporters (batch spans; metrics every 5 s) posting to a local
 *              sink (an HTTP server in this process that reads and drops the bodies).
 *
 *   pnpm bench:turn --telemetry [--adapter memory,sqlite,postgres] [--sizes 1000] [--turns 300] [--warmup 300]
 *                               [--detail turn|stages|store] [--json]
 *
 * `--adapter`: the stores of each stack (default all three): `memory` (`createInMemoryStores`: no I/O, the
 * fastest turn there is, so the largest share for telemetry), `sqlite` (`createSqliteStores` on a file
 * in a temporary directory) or `postgres` (`createPostgresStores` in a schema of its own per stack on
 * KIOKU_BENCH_POSTGRES_URL, default the local server; dropped after). `--detail`: the SDK stacks' `telemetry.detail` (default `turn`, Kioku's
 * default: prepare and record spans, the stages as list attributes on prepare; `stages` adds a span per memory stage, `store` one
 * per store call too, except the in-memory stores').
 *
 * Each row: prepare + record p50 / p95 (ms) and the ratio of each to `off`'s. Spans made per turn, and
 * what the sink received, are printed beside them.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  type ChatMessage,
  createInMemoryStores,
  type Fact,
  KiokuBuilder,
  type KiokuStores,
  type TelemetryOptions,
} from '@kioku/core';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import {
  AggregationTemporality,
  MeterProvider,
  PeriodicExportingMetricReader,
  type PushMetricExporter,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { type FactSeed, factSeeds, QUERIES } from './facts.js';
import { cliArgs, flagValue, percentile, round, sizesArg, table } from './util.js';

const SCOPE = { userId: 'bench-user' };
const DOCUMENTS = 100;
const TRANSCRIPT_TURNS = 200;
const CONFIGS = ['off', 'sdk-noop', 'sdk-otlp'] as const;
const ADAPTERS = ['memory', 'sqlite', 'postgres'] as const;
const DETAILS = ['turn', 'stages', 'store'] as const;
type TelemetryDetail = NonNullable<TelemetryOptions['detail']>;
type Adapter = (typeof ADAPTERS)[number];
type Config = (typeof CONFIGS)[number];

interface Setup {
  telemetry: TelemetryOptions;
  spans(): number;
  shutdown(): Promise<void>;
}

/** An exporter that drops what it is given (the SDK's cost without the network). */
const dropSpans: SpanExporter = {
  export: (_spans, done) => done({ code: 0 }),
  shutdown: async () => {},
};
const dropMetrics: PushMetricExporter = {
  export: (_metrics, done) => done({ code: 0 }),
  forceFlush: async () => {},
  shutdown: async () => {},
  selectAggregationTemporality: () => AggregationTemporality.CUMULATIVE,
};

/** Counts spans as they end (a processor beside the batch one). */
function spanCounter() {
  let ended = 0;
  return {
    processor: {
      onStart: () => {},
      onEnd: () => {
        ended++;
      },
      forceFlush: async () => {},
      shutdown: async () => {},
    },
    count: () => ended,
  };
}

function sdkSetup(
  traces: SpanExporter,
  metrics: PushMetricExporter,
  intervalMs: number,
  detail: TelemetryDetail,
): Setup {
  const counter = spanCounter();
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new BatchSpanProcessor(traces), counter.processor],
  });
  const meterProvider = new MeterProvider({
    readers: [new PeriodicExportingMetricReader({ exporter: metrics, exportIntervalMillis: intervalMs })],
  });
  return {
    telemetry: { tracerProvider, meterProvider, detail },
    spans: counter.count,
    shutdown: async () => {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
    },
  };
}

/** A local OTLP/HTTP sink: reads every request body and answers 200. */
async function startSink() {
  let requests = 0;
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    req.on('end', () => {
      requests++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    received: () => ({ requests, bytes }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function factRecords(seeds: readonly FactSeed[], size: number): Fact[] {
  const base = Date.now() - size * 1000;
  return Array.from({ length: size }, (_, i) => {
    const at = new Date(base + i * 1000).toISOString();
    const seed = seeds[i % seeds.length]!;
    return {
      id: `f${i}`,
      userId: SCOPE.userId,
      content: seed.content,
      category: seed.category,
      tags: seed.tags,
      metadata: {},
      provenance: { source: 'import' as const },
      createdAt: at,
      updatedAt: at,
      version: 1,
    };
  });
}

/** The PostgreSQL `--adapter postgres` uses (a schema of its own per stack, dropped after the run). */
const POSTGRES_URL = process.env.KIOKU_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Empty stores of the adapter, and how to remove them. */
async function openStores(adapter: Adapter): Promise<{ stores: KiokuStores; close(): Promise<void> }> {
  if (adapter === 'memory') return { stores: createInMemoryStores(), close: async () => {} };
  if (adapter === 'postgres') {
    const { createPostgresStores } = await import('@kioku/store-postgres');
    const schema = `kioku_bench_otel_${randomBytes(4).toString('hex')}`;
    const stores = createPostgresStores({ url: POSTGRES_URL, schema, clientOptions: { onnotice: () => {} } });
    await stores.setup();
    return {
      stores,
      close: async () => {
        await stores.database.client.unsafe(`drop schema if exists "${schema}" cascade`);
        await stores.close();
      },
    };
  }
  const { createSqliteStores } = await import('@kioku/store-sqlite');
  const directory = await mkdtemp(path.join(os.tmpdir(), 'kioku-bench-otel-'));
  const stores = createSqliteStores({ file: path.join(directory, 'kioku.db') });
  await stores.setup();
  return {
    stores,
    close: async () => {
      await stores.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/** One stack: every feature through the builder (so its stores are the traced ones), seeded alike. */
async function stack(
  stores: KiokuStores,
  telemetry: TelemetryOptions,
  seeds: readonly FactSeed[],
  size: number,
) {
  await stores.facts.restore({
    format: 'kioku.snapshot',
    schemaVersion: 1,
    kind: 'facts',
    createdAt: new Date().toISOString(),
    selector: { userId: SCOPE.userId },
    records: factRecords(seeds, size),
  });
  for (let d = 0; d < DOCUMENTS; d++) {
    const body = seeds.slice(d * 10, d * 10 + 10).map((s) => s.content);
    await stores.documents.create(SCOPE, { title: `Handbook ${d + 1}`, text: body.join(' ') });
  }
  const kioku = new KiokuBuilder({ stores, telemetry, systemPrompt: 'You are a helpful assistant.' })
    .withFacts()
    .withKnowledge()
    .withPlanMode()
    .withMemory()
    .withFacts({ mode: 'relevant' })
    .build();
  const conversation = await kioku.startConversation(SCOPE);
  const history: ChatMessage[] = [];
  for (let t = 0; t < TRANSCRIPT_TURNS; t++) {
    history.push({ role: 'user', content: seeds[(2 * t) % seeds.length]!.content });
    history.push({ role: 'assistant', content: seeds[(2 * t + 1) % seeds.length]!.content });
  }
  await stores.sessions.transcriptAppend(conversation.scope, conversation.sessionId, history);
  await stores.plans.create(conversation.scope, {
    goal: 'Organise the family trip to Lisbon in June',
    steps: ['Collect dates', 'Compare flights', 'Book flights', 'Book the apartment'],
  });
  return conversation;
}

export async function benchTurnTelemetry(): Promise<void> {
  const args = cliArgs();
  const json = args.includes('--json');
  const sizes = sizesArg(args, '1000');
  const adapters = (flagValue(args, '--adapter') ?? ADAPTERS.join(',')).split(',') as Adapter[];
  for (const a of adapters)
    if (!ADAPTERS.includes(a)) throw new Error(`--adapter takes ${ADAPTERS.join(', ')}`);
  const runs = adapters.flatMap((adapter) => sizes.map((size) => ({ adapter, size })));
  const turns = Number(flagValue(args, '--turns') ?? 300);
  const warmup = Number(flagValue(args, '--warmup') ?? 300);
  const detail = (flagValue(args, '--detail') ?? 'turn') as TelemetryDetail;
  if (!DETAILS.includes(detail)) throw new Error(`--detail takes ${DETAILS.join(', ')}`);
  // What NodeSDK registers: spans started inside a span become its children.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const seeds = factSeeds(Math.max(...sizes, 2_000));
  const results: Record<string, unknown>[] = [];
  for (const { adapter, size } of runs) {
    const sink = await startSink();
    const setups: Record<Config, Setup> = {
      off: { telemetry: {}, spans: () => 0, shutdown: async () => {} },
      'sdk-noop': sdkSetup(dropSpans, dropMetrics, 60_000, detail),
      'sdk-otlp': sdkSetup(
        new OTLPTraceExporter({ url: `${sink.url}/v1/traces` }),
        new OTLPMetricExporter({ url: `${sink.url}/v1/metrics` }),
        5_000,
        detail,
      ),
    };
    const conversations = {} as Record<Config, Awaited<ReturnType<typeof stack>>>;
    const opened: { close(): Promise<void> }[] = [];
    for (const config of CONFIGS) {
      const { stores, close } = await openStores(adapter);
      opened.push({ close });
      conversations[config] = await stack(stores, setups[config].telemetry, seeds, size);
    }
    const times: Record<Config, number[]> = { off: [], 'sdk-noop': [], 'sdk-otlp': [] };
    // CPU of the process during the turn (user + system): what load from other processes cannot inflate.
    const cpu: Record<Config, number[]> = { off: [], 'sdk-noop': [], 'sdk-otlp': [] };
    for (let k = 0; k < warmup + turns; k++) {
      const message = QUERIES[k % QUERIES.length]!;
      const answer = seeds[(k * 13 + 5) % seeds.length]!.content;
      // Rotating order: no configuration always runs first (after a GC) or last.
      for (let i = 0; i < CONFIGS.length; i++) {
        const config = CONFIGS[(k + i) % CONFIGS.length]!;
        const conversation = conversations[config];
        const cpuStart = process.cpuUsage();
        const start = performance.now();
        await conversation.prepare(message);
        await conversation.record([
          { role: 'user', content: message },
          { role: 'assistant', content: answer },
        ]);
        if (k >= warmup) {
          times[config].push(performance.now() - start);
          const used = process.cpuUsage(cpuStart);
          cpu[config].push((used.user + used.system) / 1000);
        }
      }
    }
    const spans = Object.fromEntries(CONFIGS.map((c) => [c, setups[c].spans()]));
    for (const config of CONFIGS) await setups[config].shutdown();
    for (const o of opened) await o.close();
    const received = sink.received();
    await sink.close();
    const stats = (values: number[]) => {
      const sorted = [...values].sort((a, b) => a - b);
      return { p50: percentile(sorted, 50), p95: percentile(sorted, 95) };
    };
    const off = stats(times.off);
    const offCpu = stats(cpu.off);
    for (const config of CONFIGS) {
      const s = stats(times[config]);
      const c = stats(cpu[config]);
      results.push({
        adapter,
        size,
        config,
        detail: config === 'off' ? '-' : detail,
        turns: times[config].length,
        p50: round(s.p50, 3),
        p95: round(s.p95, 3),
        p50Ratio: round(s.p50 / off.p50, 3),
        p95Ratio: round(s.p95 / off.p95, 3),
        cpuP50: round(c.p50, 3),
        cpuP50Ratio: round(c.p50 / offCpu.p50, 3),
        spansPerTurn: round((spans[config] ?? 0) / (warmup + turns), 1),
      });
    }
    if (!json) {
      console.error(
        `${adapter}, ${size} facts: the OTLP sink received ${received.requests} requests, ${received.bytes} bytes`,
      );
    }
  }
  if (json) {
    console.log(JSON.stringify({ bench: 'turn-telemetry', results }));
    return;
  }
  console.log(
    table(
      [
        'adapter',
        'facts',
        'telemetry',
        'detail',
        'turns',
        'p50 ms',
        'p95 ms',
        'p50 / off',
        'p95 / off',
        'cpu p50 ms',
        'cpu / off',
        'spans / turn',
      ],
      results.map((r) => [
        r.adapter as string,
        r.size as number,
        r.config as string,
        r.detail as string,
        r.turns as number,
        r.p50 as number,
        r.p95 as number,
        r.p50Ratio as number,
        r.p95Ratio as number,
        r.cpuP50 as number,
        r.cpuP50Ratio as number,
        r.spansPerTurn as number,
      ]),
    ),
  );
  console.log(
    '(prepare + record per turn, the three stacks interleaved turn by turn; shared machine: compare ratios.)',
  );
}
