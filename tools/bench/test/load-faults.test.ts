import { describe, expect, it } from 'vitest';
import { parseFaults, perSecond, recoverySeconds } from '../src/load-faults.js';

describe('bench:load --faults', () => {
  it('reads each fault with its time, earliest first, and takes pg-restart for restart', () => {
    expect(parseFaults('pg-restart@40,kill-worker@30,kill-app@45')).toEqual([
      { kind: 'kill-worker', at: 30 },
      { kind: 'restart', at: 40 },
      { kind: 'kill-app', at: 45 },
    ]);
    expect(parseFaults('restart@2.5')).toEqual([{ kind: 'restart', at: 2.5 }]);
    expect(parseFaults(undefined)).toEqual([]);
  });

  it('refuses a fault it does not know, naming the ones it does', () => {
    expect(() => parseFaults('restart@10,kill-server@5')).toThrow(/"kill-server@5".*kill-worker/);
    expect(() => parseFaults('restart')).toThrow(/<name>@<seconds>/);
  });
});

describe('bench:load recovery', () => {
  it('counts events per whole second of the run', () => {
    expect(perSecond([0.1, 0.9, 1.0, 2.5, 3.2, -0.1], 3)).toEqual([2, 1, 1]);
  });

  it('is the time from the server’s return to the end of the first second at 90 % of the pre-fault mean', () => {
    const rates = [2, 10, 10, 0, 0, 5, 8, 9, 10];
    // Pre-fault mean 10 (seconds 1–2; second 0 is partial); back at 4.5 s; second 7 (rate 9) is the first
    // at ≥ 9: ends at 8 s.
    expect(recoverySeconds(rates, 3, 4.5)).toBe(3.5);
    expect(recoverySeconds(rates, 3, 4.5, 0.5)).toBeCloseTo(1.5);
  });

  it('is undefined when the rate never comes back or there was no second before the fault', () => {
    expect(recoverySeconds([10, 10, 0, 1, 2], 2, 2.2)).toBeUndefined();
    expect(recoverySeconds([0, 10, 10], 1, 1)).toBeUndefined();
  });
});
