import type { Counter, Gauge, Histogram, Meter } from '@opentelemetry/api';

/**
 * Every metric Kioku records: name, instrument, unit (UCUM, counts in braces), what it measures and the
 * attributes it is recorded with (never a user id: one series per user would not scale). The metric table
 * of docs/TELEMETRY.md is this list; `test/telemetry/telemetry.test.ts` keeps the two the same.
 */
export const METRICS = Object.freeze({
  turnDuration: {
    name: 'kioku.turn.duration',
    type: 'histogram',
    unit: 's',
    description: 'A turn by phase: prepare, record, or run (the whole turn with its model calls).',
    attributes: ['kioku.turn.phase', 'error.type'],
  },
  stageDuration: {
    name: 'kioku.stage.duration',
    type: 'histogram',
    unit: 's',
    description: "One memory stage of a turn's prepare (a middleware, or budget).",
    attributes: ['kioku.stage'],
  },
  stageTokens: {
    name: 'kioku.stage.tokens',
    type: 'histogram',
    unit: '{token}',
    description: 'Tokens a memory stage injected into the prompt (its ledger entry).',
    attributes: ['kioku.stage'],
  },
  stageDropped: {
    name: 'kioku.stage.dropped',
    type: 'counter',
    unit: '{item}',
    description: 'Items a memory stage left out, by reason (budget, limit, irrelevant, …).',
    attributes: ['kioku.stage', 'kioku.drop.reason'],
  },
  modelDuration: {
    name: 'gen_ai.client.operation.duration',
    type: 'histogram',
    unit: 's',
    description: 'A model call (the turn model, or a memory pass) as the gen_ai conventions define it.',
    attributes: [
      'gen_ai.operation.name',
      'gen_ai.provider.name',
      'gen_ai.request.model',
      'kioku.pass',
      'error.type',
    ],
  },
  modelTokens: {
    name: 'gen_ai.client.token.usage',
    type: 'histogram',
    unit: '{token}',
    description: 'Tokens of a model call, by gen_ai.token.type (input, output) and kioku.pass.',
    attributes: [
      'gen_ai.operation.name',
      'gen_ai.provider.name',
      'gen_ai.request.model',
      'kioku.pass',
      'gen_ai.token.type',
    ],
  },
  passDuration: {
    name: 'kioku.pass.duration',
    type: 'histogram',
    unit: 's',
    description: 'A background memory pass (extraction, enrichment, dream passes, knowledge).',
    attributes: ['kioku.pass', 'error.type'],
  },
  outboxPendingTurns: {
    name: 'kioku.outbox.pending_turns',
    type: 'gauge',
    unit: '{turn}',
    description: 'User turns recorded and not yet extracted, as a worker batch found them.',
    attributes: [],
  },
  outboxOldestAge: {
    name: 'kioku.outbox.oldest_pending_age',
    type: 'gauge',
    unit: 's',
    description: 'How long the oldest pending turn has waited, as a worker batch found it.',
    attributes: [],
  },
  workerBatches: {
    name: 'kioku.worker.batches',
    type: 'counter',
    unit: '{batch}',
    description: 'Rounds of runPending (a worker batch: every user with pending work, once).',
    attributes: [],
  },
  workerLeases: {
    name: 'kioku.worker.leases',
    type: 'counter',
    unit: '{lease}',
    description: "Users' memory-work leases a batch asked for, by outcome (acquired, busy, failed).",
    attributes: ['kioku.lease.outcome'],
  },
  quarantinedWrites: {
    name: 'kioku.quarantine.writes',
    type: 'counter',
    unit: '{write}',
    description: "Writes quarantined because they read like instructions, by the detector's strongest rule.",
    attributes: ['kioku.quarantine.reason', 'kioku.provenance.source'],
  },
  forgetReceipts: {
    name: 'kioku.forget.receipts',
    type: 'counter',
    unit: '{receipt}',
    description: 'Erasures done (forget a user, a session or a fact), by target.',
    attributes: ['kioku.forget.target', 'kioku.forget.dry_run'],
  },
  storeErrors: {
    name: 'kioku.store.errors',
    type: 'counter',
    unit: '{error}',
    description: 'Store calls that failed, by adapter, kind, operation and error.type.',
    attributes: ['kioku.store.adapter', 'kioku.store.kind', 'kioku.store.operation', 'error.type'],
  },
} as const);

type Instrument<T> = T extends { type: 'histogram' }
  ? Histogram
  : T extends { type: 'counter' }
    ? Counter
    : Gauge;

/** The instruments of `METRICS`, made on one meter. */
export type Instruments = { readonly [K in keyof typeof METRICS]: Instrument<(typeof METRICS)[K]> };

/** Durations in seconds (OpenTelemetry's unit) with second-scale buckets for sub-millisecond work too. */
const SECONDS_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];
const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304];

export function makeInstruments(meter: Meter): Instruments {
  const made: Record<string, Histogram | Counter | Gauge> = {};
  for (const [key, spec] of Object.entries(METRICS)) {
    const base = { unit: spec.unit, description: spec.description };
    if (spec.type === 'counter') made[key] = meter.createCounter(spec.name, base);
    else if (spec.type === 'gauge') made[key] = meter.createGauge(spec.name, base);
    else {
      const boundaries = spec.unit === 's' ? SECONDS_BUCKETS : TOKEN_BUCKETS;
      made[key] = meter.createHistogram(spec.name, {
        ...base,
        advice: { explicitBucketBoundaries: boundaries },
      });
    }
  }
  return made as unknown as Instruments;
}
