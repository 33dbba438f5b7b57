/**
 * `bench:load`'s faults and what it computes from the run's per-second rate: which fault happens when
 * (`--faults restart@10,kill-worker@6,kill-app@14`), turns per second, and the recovery after a restart.
 */

export type FaultKind = 'restart' | 'kill-worker' | 'kill-app';

export interface Fault {
  kind: FaultKind;
  /** Seconds into the timed run. */
  at: number;
}

/** `pg-restart` is the name the first version of the bench took: still accepted, for any store's server. */
const FAULT_NAMES: Record<string, FaultKind> = {
  restart: 'restart',
  'pg-restart': 'restart',
  'kill-worker': 'kill-worker',
  'kill-app': 'kill-app',
};

/** Parses `--faults restart@10,kill-worker@6,kill-app@14`, earliest first; throws on a name or time it does not know. */
export function parseFaults(spec: string | undefined): Fault[] {
  if (!spec) return [];
  const faults = spec.split(',').map((part) => {
    const match = /^([a-z-]+)@(\d+(?:\.\d+)?)$/.exec(part.trim());
    const kind = match ? FAULT_NAMES[match[1]!] : undefined;
    if (!match || !kind) {
      throw new Error(
        `--faults: "${part}" is not a fault: give <name>@<seconds>, the name one of ${Object.keys(FAULT_NAMES).join(', ')} (e.g. restart@10,kill-worker@6,kill-app@14).`,
      );
    }
    return { kind, at: Number(match[2]) };
  });
  return faults.sort((a, b) => a.at - b.at);
}

/** Events (seconds into the run) counted per whole second, `seconds` buckets: turns/s over time. */
export function perSecond(times: readonly number[], seconds: number): number[] {
  const buckets = Array.from({ length: Math.max(0, Math.ceil(seconds)) }, () => 0);
  for (const t of times) {
    const s = Math.floor(t);
    if (s >= 0 && s < buckets.length) buckets[s]!++;
  }
  return buckets;
}

/**
 * Seconds from the server's return (`backAt`, seconds into the run) until the rate is back: the end of the
 * first whole second at or after `backAt` whose rate is at least `share` of the mean over the seconds from 1
 * to `firstFaultAt`. Undefined when there was no such second before the first fault, or the rate never came back.
 */
export function recoverySeconds(
  rates: readonly number[],
  firstFaultAt: number,
  backAt: number,
  share = 0.9,
): number | undefined {
  // Second 0 counts only the turns that both started and ended in it (timed turns start at 0 s): left out.
  const before = rates.slice(1, Math.floor(firstFaultAt));
  if (before.length === 0) return undefined;
  const mean = before.reduce((s, r) => s + r, 0) / before.length;
  for (let s = Math.ceil(backAt); s < rates.length; s++) {
    if (rates[s]! >= share * mean) return s + 1 - backAt;
  }
  return undefined;
}
