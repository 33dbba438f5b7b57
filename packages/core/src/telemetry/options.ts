import type { MeterProvider, TracerProvider } from '@opentelemetry/api';
import type { OptionSpecOf } from '../foundation/options.js';

/** How many spans Kioku makes: see `TelemetryOptions.detail`. */
export const TELEMETRY_DETAILS = ['turn', 'stages', 'store'] as const;
export type TelemetryDetail = (typeof TELEMETRY_DETAILS)[number];

/**
 * How Kioku speaks OpenTelemetry (`KiokuOptions.telemetry`). By default it uses the providers the app's
 * OpenTelemetry SDK registered globally, and does nothing at all when none is registered when Kioku is
 * built. Attributes never hold memory text, messages or fact content unless `captureContent` is on.
 */
export interface TelemetryOptions {
  /** `false`: no spans and no metrics even when an SDK is registered. Default true. */
  enabled?: boolean;
  /** Where spans go (default: the global tracer provider). */
  tracerProvider?: TracerProvider;
  /** Where metrics go (default: the global meter provider, as registered when Kioku is built). */
  meterProvider?: MeterProvider;
  /**
   * Put content into span attributes: the user message and answer on the turn, block text on the stage
   * spans, and error messages. Default false: counts, ids, names and durations only.
   */
  captureContent?: boolean;
  /**
   * How a user id appears on spans (metrics never carry one): `hash` (default: the first 16 hex digits of
   * its SHA-256, the same in every process, so a user's spans can be found; a guessable id such as an email
   * can be found by hashing guesses: pass a keyed function then), `omit`, or a function of your own (e.g. an
   * HMAC with your key, or the id itself).
   */
  userId?: 'hash' | 'omit' | ((userId: string) => string);
  /**
   * How many spans Kioku makes. `turn` (default): the turn, its prepare and record, model and tool calls,
   * passes, worker batches and forgets; each memory stage's ledger entry and duration is an event
   * (`kioku.stage`) on `kioku.prepare` and in the stage metrics, and store calls make no span (their
   * failures are counted). `stages`: a span per memory stage and prefetch too. `store`: and a span per
   * store call. Every metric is recorded at every level.
   */
  detail?: TelemetryDetail;
  /**
   * With `detail: 'store'`: spans for the in-memory stores' calls too (default false: they never wait on
   * I/O, so their time is only in the span of the stage, pass or tool that made them).
   */
  memoryStoreSpans?: boolean;
  /**
   * With `detail: 'store'`: the SQL each store call ran, as `db.query.text` on its span (default false):
   * the statements as prepared, with their placeholders, never the values bound to them (user content
   * stays out). Adapters that report their statements: SQLite (on a connection it opened).
   */
  queryText?: boolean;
}

/** What `telemetry` accepts, for `checkOptions` (the builder's, `traceStores`, `traceTools`). */
export const TELEMETRY_OPTIONS = {
  enabled: [true, false],
  tracerProvider: true,
  meterProvider: true,
  captureContent: [true, false],
  userId: true,
  detail: TELEMETRY_DETAILS,
  memoryStoreSpans: [true, false],
  queryText: [true, false],
} satisfies OptionSpecOf<TelemetryOptions>;
