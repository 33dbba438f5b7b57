/**
 * Timing shared by the Redis and Qdrant rows of the store bench: each adapter call beside its raw-client
 * twin, one of each per round, in an order a seeded coin decides — the method of `src/store-sql.ts`, whose
 * row shape (`SqlRow`) these rows also use, so `src/store.ts` prints them in the same tables.
 */
import { performance } from 'node:perf_hooks';
import type { Figures, SqlRow } from './store-rows.js';
import { percentile, randomPicks, round } from './util.js';

/** A row of an adapter measured beside its raw client, in the SQL rows' shape. */
export type AdapterRow<A extends string> = Omit<SqlRow, 'adapter'> & {
  adapter: A;
  /** Lines printed under the comparison table: what the raw side does, where the server is. */
  notes: string[];
  /** Further figures of this adapter and size (JSON `adapter_details`). */
  details?: Record<string, number>;
};

/** One timed call; it may call `restart()` to leave its preparation out of the time. */
export type Timed = (i: number, restart: () => void) => unknown;

export interface Interleaved {
  /** Wall-clock time of each call, ms. */
  adapter: number[];
  raw: number[];
  /** CPU time of this process during each call (user + system), µs: the client side alone. */
  adapterCpu: number[];
  rawCpu: number[];
}

/** `n` rounds, one call of each side per round, the order decided by a seeded coin; each side's times. */
export async function interleaved(n: number, adapter: Timed, raw: Timed): Promise<Interleaved> {
  const times: Interleaved = { adapter: [], raw: [], adapterCpu: [], rawCpu: [] };
  const once = async (fn: Timed, i: number, into: number[], cpuInto: number[]) => {
    let start = performance.now();
    let cpu = process.cpuUsage();
    await fn(i, () => {
      start = performance.now();
      cpu = process.cpuUsage();
    });
    into.push(performance.now() - start);
    const used = process.cpuUsage(cpu);
    cpuInto.push(used.user + used.system);
  };
  let coin = 0x9e3779b9;
  for (let i = 0; i < n; i++) {
    coin = (Math.imul(coin, 1103515245) + 12345) >>> 0;
    if (coin & 0x10000) {
      await once(adapter, i, times.adapter, times.adapterCpu);
      await once(raw, i, times.raw, times.rawCpu);
    } else {
      await once(raw, i, times.raw, times.rawCpu);
      await once(adapter, i, times.adapter, times.adapterCpu);
    }
  }
  return times;
}

export const perSecond = (times: readonly number[], items = 1) =>
  (times.length * items) / (times.reduce((a, b) => a + b, 0) / 1000);

const sorted = (times: readonly number[]) => [...times].sort((a, b) => a - b);

export const medianUs = (times: readonly number[]) => round(percentile(sorted(times), 50) * 1000, 1);

/** Mean of CPU times already in µs. */
export const meanUs = (times: readonly number[]) => round(times.reduce((a, b) => a + b, 0) / times.length, 1);

/** One side's figures from its write, read, search and search-after-write times (ms). */
export function figures(w: number[], r: number[], s: number[], a: number[]): Figures {
  const ss = sorted(s);
  const as = sorted(a);
  return {
    writesPerS: round(perSecond(w), 0),
    readsPerS: round(perSecond(r), 0),
    writeP50Us: medianUs(w),
    readP50Us: medianUs(r),
    searchP50: round(percentile(ss, 50), 3),
    searchP95: round(percentile(ss, 95), 3),
    searchMean: round(ss.reduce((x, y) => x + y, 0) / ss.length, 3),
    afterWriteP50: round(percentile(as, 50), 3),
    afterWriteP95: round(percentile(as, 95), 3),
  };
}

/** A pseudo-random walk over `items` (the reads of one side). */
export function walk<T>(items: readonly T[], seed: number): () => T {
  return randomPicks(items, seed);
}

/**
 * Client CPU per call (this process) of each named operation, adapter beside raw: as row details
 * (`client_cpu_<op>_us`, `raw_client_cpu_<op>_us`) and as one note line. With the server on the same machine,
 * wall-clock time also holds waits; this is what the adapter itself costs.
 */
export function clientCpu(ops: Record<string, Interleaved>): {
  details: Record<string, number>;
  line: string;
} {
  const details: Record<string, number> = {};
  const parts: string[] = [];
  for (const [op, t] of Object.entries(ops)) {
    const adapter = meanUs(t.adapterCpu);
    const raw = meanUs(t.rawCpu);
    details[`client_cpu_${op}_us`] = adapter;
    details[`raw_client_cpu_${op}_us`] = raw;
    parts.push(`${op.replace('_', ' ')} ${adapter} / ${raw} (×${round(adapter / raw, 2)})`);
  }
  return { details, line: parts.join(', ') };
}
