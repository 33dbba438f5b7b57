import { context, createContextKey } from '@opentelemetry/api';

/** The statements a store call ran, while its span collects them (`telemetry.queryText`). */
const QUERY_TEXTS = createContextKey('kioku.store.query_texts');

/** Kiokus that asked for query text: until one does, `noteQueryText` returns at once. */
let collectors = 0;

/** A Kioku (or `traceStores`) with `queryText` on was made. */
export function collectQueryTexts(): void {
  collectors++;
}

/**
 * For adapters: the SQL a store call is about to run, as prepared, with its placeholders (`?`, `$1`) —
 * never with the values bound to them. It goes on the call's span as `db.query.text` when the app opted
 * in (`telemetry: { detail: 'store', queryText: true }`); otherwise it is dropped at once.
 */
export function noteQueryText(text: string): void {
  if (collectors === 0) return;
  (context.active().getValue(QUERY_TEXTS) as Set<string> | undefined)?.add(text);
}

/** Run a store call collecting the statements it notes (the caller puts them on its span). */
export function collectingQueryTexts<T>(texts: Set<string>, run: () => T): T {
  return context.with(context.active().setValue(QUERY_TEXTS, texts), run);
}
