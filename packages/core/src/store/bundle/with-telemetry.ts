import { type Attributes, type Span, SpanKind, type Tracer } from '@opentelemetry/api';
import { ATTR, errorType } from '../../telemetry/attributes.js';
import type { TelemetryOptions } from '../../telemetry/options.js';
import { collectingQueryTexts } from '../../telemetry/query-text.js';
import { Telemetry } from '../../telemetry/telemetry.js';
import type { KiokuStores } from './bundle.js';
import { keepEmbedder } from './with-embeddings.js';

/** The kinds' store and index class-name endings, taken off to name the adapter (`PostgresFactStore` → `postgres`). */
const CLASS_SUFFIX =
  /(FactStore|DocumentStore|PlanStore|WorkingMemoryStore|SessionStore|DetailStore|VectorIndex)$/;

/** OpenTelemetry's `db.system.name` of the adapters that have one. */
const DB_SYSTEMS: Readonly<Record<string, string>> = {
  postgres: 'postgresql',
  sqlite: 'sqlite',
  redis: 'redis',
  qdrant: 'qdrant',
};

/**
 * The bundle with a span and metrics around every store call: `<operation> <kind>` (e.g. `search facts`)
 * with `kioku.store.adapter`, `.kind`, `.operation`, `.rows` (records returned, when the result is a list
 * or a record; the user is on the span it nests in), plus `kioku.store.errors` by error type (the
 * spans carry the durations). Arguments and results are never attributes. The builder puts it right over the
 * app's bundle, under recall's signals and embeddings, so a span is one call to the backend's adapter.
 */
export function withStoreTelemetry(stores: KiokuStores, telemetry: Telemetry): KiokuStores {
  // No store span and no metric to count failures in: nothing to wrap.
  if (!telemetry.storeSpans && !telemetry.metrics) return stores;
  const wrapped: KiokuStores = {
    facts: traced(stores.facts, 'facts', telemetry),
    documents: traced(stores.documents, 'documents', telemetry),
    plans: traced(stores.plans, 'plans', telemetry),
    working: traced(stores.working, 'working', telemetry),
    sessions: traced(stores.sessions, 'sessions', telemetry),
    details: traced(stores.details, 'details', telemetry),
    ...(stores.vectors ? { vectors: traced(stores.vectors, 'vectors', telemetry) } : {}),
    setup: () => stores.setup(),
    close: () => stores.close(),
  };
  keepEmbedder(stores, wrapped);
  return wrapped;
}

/** Adapter names given to stores whose class does not tell (the generic stores over a storage backend). */
const NAMED = new WeakMap<object, string>();

/** Name the adapter of a bundle's stores, for the stores whose class names do not say it. */
export function nameAdapter(stores: KiokuStores, adapter: string): void {
  for (const store of [
    stores.facts,
    stores.documents,
    stores.plans,
    stores.working,
    stores.sessions,
    stores.details,
  ]) {
    NAMED.set(store, adapter);
  }
}

/**
 * The adapter a store belongs to: the name its bundle was given (`storesOverBackend` names its stores
 * after the backend: `SqliteRecordBackend` → `sqlite`), else its class name without the kind
 * (`PostgresFactStore` → `postgres`, `InMemoryFactStore` → `memory`).
 */
export function adapterName(store: object): string {
  const named = NAMED.get(store);
  if (named !== undefined) return named;
  return shortName(store.constructor?.name ?? '', CLASS_SUFFIX);
}

/** A class name without its suffix, lower case; `InMemory…` is `memory`. */
export function shortName(className: string, suffix: RegExp): string {
  const base = className.replace(suffix, '').toLowerCase();
  if (base === '' || base === 'object') return 'unknown';
  return base === 'inmemory' ? 'memory' : base;
}

function traced<T extends object>(store: T, kind: string, telemetry: Telemetry): T {
  const adapter = adapterName(store);
  const system = DB_SYSTEMS[adapter];
  // Spans only with `detail: 'store'`; in-memory calls are function calls: no span unless asked for too.
  const tracer =
    telemetry.storeSpans && (adapter !== 'memory' || telemetry.memoryStoreSpans)
      ? telemetry.tracer
      : undefined;
  const methods = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key, target);
      if (typeof value !== 'function' || key === 'constructor') return value;
      let method = methods.get(key);
      if (method === undefined) {
        const operation = String(key);
        const base: Attributes = {
          [ATTR.storeAdapter]: adapter,
          [ATTR.storeKind]: kind,
          [ATTR.storeOperation]: operation,
        };
        const spanAttributes: Attributes = system ? { ...base, 'db.system.name': system } : base;
        method = (...args: unknown[]) =>
          call(telemetry, tracer, `${operation} ${kind}`, base, spanAttributes, () =>
            value.apply(target, args),
          );
        methods.set(key, method);
      }
      return method;
    },
  });
}

function call(
  telemetry: Telemetry,
  tracer: Tracer | undefined,
  name: string,
  base: Attributes,
  spanAttributes: Attributes,
  run: () => unknown,
): unknown {
  if (!tracer) return counted(telemetry, base, run);
  // A child of the active span (the stage, pass or tool that made the call); nothing nests in it.
  const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes: spanAttributes });
  const texts = telemetry.queryText ? new Set<string>() : undefined;
  let result: unknown;
  try {
    result = texts ? collectingQueryTexts(texts, run) : run();
  } catch (error) {
    finish(telemetry, span, base, undefined, error);
    throw error;
  }
  if (!(result instanceof Promise)) {
    noteTexts(span, texts);
    finish(telemetry, span, base, result, undefined);
    return result;
  }
  return result.then(
    (value) => {
      noteTexts(span, texts);
      finish(telemetry, span, base, value, undefined);
      return value;
    },
    (error: unknown) => {
      finish(telemetry, span, base, undefined, error);
      throw error;
    },
  );
}

/** The statements a call ran, on its span: `db.query.text` (one per line, in the order first run). */
function noteTexts(span: Span, texts: Set<string> | undefined): void {
  if (texts && texts.size > 0) span.setAttribute('db.query.text', [...texts].join(';\n'));
}

/** A call without a span: only a failure is counted, and the caller gets the store's own promise. */
function counted(telemetry: Telemetry, base: Attributes, run: () => unknown): unknown {
  let result: unknown;
  try {
    result = run();
  } catch (error) {
    finish(telemetry, undefined, base, undefined, error);
    throw error;
  }
  if (result instanceof Promise) {
    result.then(undefined, (error: unknown) => finish(telemetry, undefined, base, undefined, error));
  }
  return result;
}

function finish(
  telemetry: Telemetry,
  span: Span | undefined,
  base: Attributes,
  value: unknown,
  error: unknown,
): void {
  const failed = error !== undefined;
  if (span) {
    if (failed) telemetry.fail(span, error);
    else {
      const rows = rowsOf(value);
      if (rows !== undefined) span.setAttribute(ATTR.storeRows, rows);
    }
    span.end();
  }
  const instruments = telemetry.metrics;
  if (!instruments || !failed) return;
  instruments.storeErrors.add(1, { ...base, [ATTR.errorType]: errorType(error) });
}

/** Records a call returned: a list's length, 1 for a record, 0 for none; undefined for anything else. */
function rowsOf(value: unknown): number | undefined {
  if (Array.isArray(value)) return value.length;
  if (value === null) return 0;
  if (value && typeof value === 'object' && 'id' in value) return 1;
  return undefined;
}

/**
 * The bundle with a span and metrics around every store call (see `withStoreTelemetry`), for an app or a
 * server that uses stores without `KiokuBuilder` (which does this itself): the providers of `options`, or
 * those the OpenTelemetry SDK registered. The bundle itself when nothing would be recorded.
 */
export function traceStores(stores: KiokuStores, options: TelemetryOptions = {}): KiokuStores {
  const telemetry = Telemetry.from(options, 'traceStores');
  return telemetry ? withStoreTelemetry(stores, telemetry) : stores;
}
