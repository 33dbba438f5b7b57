import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import {
  type Attributes,
  type Context,
  context,
  createContextKey,
  createNoopMeter,
  type Meter,
  type MeterProvider,
  metrics,
  ROOT_CONTEXT,
  type Span,
  type SpanKind,
  SpanStatusCode,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import { checkOptions } from '../foundation/options.js';
import { ATTR, errorType } from './attributes.js';
import { type Instruments, makeInstruments } from './instruments.js';
import { TELEMETRY_OPTIONS, type TelemetryOptions } from './options.js';
import { collectQueryTexts } from './query-text.js';

/** The instrumentation scope Kioku's spans and metrics carry. */
export const INSTRUMENTATION_SCOPE = '@kioku/core';

/** Hashed user ids kept before the map starts again (a bound for a long-lived process). */
const MAX_HASHED = 10_000;

/**
 * One Kioku's OpenTelemetry: its tracer and instruments, and what attributes may hold. `Telemetry.from`
 * returns undefined when nothing would be recorded (no SDK registered, none given, or `enabled: false`):
 * every instrumented seam then runs exactly its uninstrumented code.
 */
export class Telemetry {
  /** Undefined when traces are off (metrics alone are on). */
  readonly tracer: Tracer | undefined;
  /** Undefined when metrics are off (traces alone are on). */
  readonly metrics: Instruments | undefined;
  readonly captureContent: boolean;
  /** A span per memory stage and prefetch (`detail` `stages` or `store`). */
  readonly stageSpans: boolean;
  /** A span per store call (`detail: 'store'`); the in-memory stores' only with `memoryStoreSpans`. */
  readonly storeSpans: boolean;
  readonly memoryStoreSpans: boolean;
  /** `db.query.text` on store spans (`queryText`, with store spans). */
  readonly queryText: boolean;
  /**
   * Whether the ambient (see `withTelemetry`) lives in OpenTelemetry's context: a context manager was
   * registered when this was made. A span then enters it too: `span` needs no `withTelemetry` around it.
   */
  readonly inContext: boolean;
  readonly #userId: NonNullable<TelemetryOptions['userId']>;
  readonly #hashed = new Map<string, string>();

  private constructor(tracer: Tracer | undefined, meter: Meter | undefined, options: TelemetryOptions) {
    this.tracer = tracer;
    this.metrics = meter ? makeInstruments(meter) : undefined;
    this.captureContent = options.captureContent === true;
    const detail = options.detail ?? 'turn';
    this.stageSpans = tracer !== undefined && detail !== 'turn';
    this.storeSpans = tracer !== undefined && detail === 'store';
    this.memoryStoreSpans = this.storeSpans && options.memoryStoreSpans === true;
    this.queryText = this.storeSpans && options.queryText === true;
    if (this.queryText) collectQueryTexts();
    this.#userId = options.userId ?? 'hash';
    this.inContext = contextWorks();
  }

  static from(options: TelemetryOptions = {}, where?: string): Telemetry | undefined {
    if (where !== undefined) checkOptions(where, options, TELEMETRY_OPTIONS);
    if (options.enabled === false) return undefined;
    const tracer = resolveTracer(options.tracerProvider);
    const meter = resolveMeter(options.meterProvider);
    return tracer || meter ? new Telemetry(tracer, meter, options) : undefined;
  }

  /** The attributes naming a user (as configured: hashed by default), agent and session. */
  scope(scope: { userId: string; agentId?: string | undefined; threadId?: string | undefined }): Attributes {
    const attributes: Attributes = {};
    const user = this.user(scope.userId);
    if (user !== undefined) attributes[ATTR.userId] = user;
    if (scope.agentId !== undefined) attributes[ATTR.agentId] = scope.agentId;
    if (scope.threadId !== undefined) attributes[ATTR.sessionId] = scope.threadId;
    return attributes;
  }

  /** A user id as spans show it: hashed (default), left out, or the app's own mapping. */
  user(userId: string): string | undefined {
    const mode = this.#userId;
    if (mode === 'omit') return undefined;
    if (typeof mode === 'function') return mode(userId);
    let hashed = this.#hashed.get(userId);
    if (hashed === undefined) {
      if (this.#hashed.size >= MAX_HASHED) this.#hashed.clear();
      hashed = createHash('sha256').update(userId).digest('hex').slice(0, 16);
      this.#hashed.set(userId, hashed);
    }
    return hashed;
  }

  /**
   * Run `fn` inside a span (the active one while it runs, so spans below nest in it); a failure marks the
   * span with `error.type` (and, with `captureContent`, the exception) and is rethrown. Without traces,
   * `fn` runs with no span. `ended` is called once `fn` settled, with the failure's `error.type` if any
   * (where a duration metric is recorded: no second async layer around the span).
   */
  span<T>(
    name: string,
    attributes: Attributes,
    fn: (span: Span | undefined) => Promise<T>,
    options: { kind?: SpanKind; ended?: (failure: string | undefined) => void } = {},
  ): Promise<T> {
    const { kind, ended } = options;
    if (!this.tracer) return ended ? settled(() => fn(undefined), ended) : fn(undefined);
    const spanOptions = kind === undefined ? { attributes } : { attributes, kind };
    return this.tracer.startActiveSpan(name, spanOptions, spanContext(this), async (span) => {
      let failure: string | undefined;
      try {
        return await fn(span);
      } catch (error) {
        failure = errorType(error);
        this.fail(span, error);
        throw error;
      } finally {
        span.end();
        ended?.(failure);
      }
    });
  }

  /**
   * A background memory pass: the span `kioku.pass <pass>` (model calls and store calls nest in it) and its
   * duration in `kioku.pass.duration`.
   */
  pass<T>(pass: string, attributes: Attributes, fn: (span: Span | undefined) => Promise<T>): Promise<T> {
    const start = performance.now();
    return this.span(`kioku.pass ${pass}`, { [ATTR.pass]: pass, ...attributes }, fn, {
      ended: (failure) =>
        this.metrics?.passDuration.record(secondsSince(start), {
          [ATTR.pass]: pass,
          ...(failure ? { [ATTR.errorType]: failure } : {}),
        }),
    });
  }

  /** Run `fn` outside any span (its spans start a trace of their own), when traces are on. */
  detached<T>(fn: () => T): T {
    return this.tracer ? context.with(ROOT_CONTEXT, fn) : fn();
  }

  /** Mark a span failed: `error.type` always; the message and exception only with `captureContent`. */
  fail(span: Span, error: unknown): void {
    const type = errorType(error);
    span.setAttribute(ATTR.errorType, type);
    if (this.captureContent) {
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message ?? String(error) });
    } else span.setStatus({ code: SpanStatusCode.ERROR, message: type });
  }
}

function resolveTracer(provider: TracerProvider | undefined): Tracer | undefined {
  if (provider) return provider.getTracer(INSTRUMENTATION_SCOPE);
  const global = trace.getTracerProvider() as TracerProvider & {
    getDelegateTracer?: (name: string) => Tracer | undefined;
  };
  // The API's global is a proxy with no delegate until an SDK registers one: nothing would be recorded.
  if (typeof global.getDelegateTracer === 'function' && !global.getDelegateTracer(INSTRUMENTATION_SCOPE)) {
    return undefined;
  }
  return global.getTracer(INSTRUMENTATION_SCOPE);
}

function resolveMeter(provider: MeterProvider | undefined): Meter | undefined {
  const meter = (provider ?? metrics.getMeterProvider()).getMeter(INSTRUMENTATION_SCOPE);
  return meter === createNoopMeter() ? undefined : meter;
}

/** The Kioku whose work is running, and the innermost pass it is in. */
interface Ambient {
  telemetry: Telemetry;
  pass?: string;
}

/**
 * Where the ambient is kept: in OpenTelemetry's context when a context manager is registered (the span
 * and the ambient enter together: one context switch, and no AsyncLocalStorage of Kioku's own to
 * propagate through every promise), else in a storage of its own (metrics with no context manager).
 */
const AMBIENT = createContextKey('kioku.telemetry');
const fallback = new AsyncLocalStorage<Ambient>();

function currentAmbient(): Ambient | undefined {
  return (context.active().getValue(AMBIENT) as Ambient | undefined) ?? fallback.getStore();
}

function enter<T>(value: Ambient, fn: () => T): T {
  return value.telemetry.inContext
    ? context.with(context.active().setValue(AMBIENT, value), fn)
    : fallback.run(value, fn);
}

/** Whether OpenTelemetry's context carries values across calls (a context manager is registered). */
function contextWorks(): boolean {
  const probe = createContextKey('kioku.telemetry.probe');
  return context.with(
    context.active().setValue(probe, true),
    () => context.active().getValue(probe) === true,
  );
}

/** The context a span of `telemetry` starts in: the active one, with `telemetry` as the ambient. */
function spanContext(telemetry: Telemetry): Context {
  const active = context.active();
  const current = active.getValue(AMBIENT) as Ambient | undefined;
  return current?.telemetry === telemetry || !telemetry.inContext
    ? active
    : active.setValue(AMBIENT, { telemetry });
}

/**
 * Run `fn` with `telemetry` as the active Kioku's (what the seams deep in a pass read with
 * `activeTelemetry()`: model calls, quarantine, pass spans). Without telemetry, `fn` just runs.
 */
export function withTelemetry<T>(telemetry: Telemetry | undefined, fn: () => T): T {
  if (!telemetry) return fn();
  return currentAmbient()?.telemetry === telemetry ? fn() : enter({ telemetry }, fn);
}

/** The telemetry of the Kioku whose work is running, or undefined (off, or outside Kioku's entry points). */
export function activeTelemetry(): Telemetry | undefined {
  return currentAmbient()?.telemetry;
}

/** The innermost pass running (`kioku.pass` of its model calls), when telemetry is on. */
export function activePass(): string | undefined {
  return currentAmbient()?.pass;
}

/**
 * `fn` as a pass of the active Kioku's telemetry (see `Telemetry.pass`; model calls inside carry its
 * name), or just `fn` when telemetry is off. `attributes` is called only when it is on.
 */
export function inPass<T>(
  pass: string,
  attributes: () => Attributes,
  fn: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  const current = currentAmbient();
  if (!current) return fn(undefined);
  return enter({ telemetry: current.telemetry, pass }, () => current.telemetry.pass(pass, attributes(), fn));
}

/** `run()`'s promise, with `ended` called once it settled (the failure's `error.type` if it failed or threw). */
function settled<T>(run: () => Promise<T>, ended: (failure: string | undefined) => void): Promise<T> {
  let promise: Promise<T>;
  try {
    promise = run();
  } catch (error) {
    ended(errorType(error));
    return Promise.reject(error);
  }
  return promise.then(
    (value) => {
      ended(undefined);
      return value;
    },
    (error: unknown) => {
      ended(errorType(error));
      throw error;
    },
  );
}

/** Seconds since `start` (a `performance.now()` reading): the unit of every duration metric. */
export function secondsSince(start: number): number {
  return (performance.now() - start) / 1000;
}
