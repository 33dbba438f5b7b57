/**
 * The store bench's "search with recall's signals" rows: each adapter's `search` beside the same store
 * wrapped in `RecallFactStore` (which asks it for a pool of max(32, 4 × limit) hits and re-ranks them),
 * interleaved call by call so both see the same machine load. The queries are the bench's own (limit 8).
 */
import type { Scope } from '@kioku/core';
import { type FactStore, withRecallSignals } from '@kioku/core/store';
import { interleaved } from './store-interleave.js';
import { percentile, round, table } from './util.js';

export interface SignalsRow {
  adapter: string;
  size: number;
  p50: number;
  p95: number;
  signalsP50: number;
  signalsP95: number;
}

/** Rows measured so far, printed by `signalsTable` at the end of the run. */
export const signalsRows: SignalsRow[] = [];

export async function timeSignals(
  adapter: string,
  size: number,
  store: FactStore,
  scope: Scope,
  queries: readonly string[],
  searches: number,
): Promise<void> {
  const signalled = withRecallSignals(store);
  for (const query of queries.slice(0, 30)) await signalled.search(scope, { query }); // warm-up
  const times = await interleaved(
    searches,
    (i) => store.search(scope, { query: queries[i % queries.length]! }),
    (i) => signalled.search(scope, { query: queries[i % queries.length]! }),
  );
  const p = (list: number[], q: number) =>
    round(
      percentile(
        [...list].sort((a, b) => a - b),
        q,
      ),
      3,
    );
  signalsRows.push({
    adapter,
    size,
    p50: p(times.adapter, 50),
    p95: p(times.adapter, 95),
    signalsP50: p(times.raw, 50),
    signalsP95: p(times.raw, 95),
  });
}

export function signalsTable(): string[] {
  if (signalsRows.length === 0) return [];
  return [
    '',
    "Search with recall's signals beside the store's search alone (interleaved; ms; × = p95 with ÷ p95 without):",
    table(
      ['adapter', 'facts', 'p50', 'with signals', 'p95', 'with signals', '×'],
      signalsRows.map((r) => [
        r.adapter,
        r.size,
        r.p50.toFixed(3),
        r.signalsP50.toFixed(3),
        r.p95.toFixed(3),
        r.signalsP95.toFixed(3),
        (r.signalsP95 / r.p95).toFixed(2),
      ]),
    ),
  ];
}
