/** Time source for timestamps and TTLs; inject a controllable one in tests. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to, for TTL and ordering tests. */
export class ManualClock implements Clock {
  #now: number;

  constructor(start: number | Date = Date.UTC(2025, 0, 1)) {
    this.#now = typeof start === 'number' ? start : start.getTime();
  }

  now(): number {
    return this.#now;
  }

  advance(ms: number): void {
    this.#now += ms;
  }

  set(time: number | Date): void {
    this.#now = typeof time === 'number' ? time : time.getTime();
  }
}

export function isoAt(clock: Clock): string {
  return new Date(clock.now()).toISOString();
}
