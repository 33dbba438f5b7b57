/**
 * Runs memory turn sides (`memory-turn.ts`) side by side: timed turns interleaved (each turn on one side
 * then the next, so load from elsewhere on the machine falls on all alike), and the statements and syncs
 * each side sends per turn, counted through a proxy (`pg-wire-count.ts`) on sides of their own.
 */
import type { MemoryTurn, MemoryTurnSide } from './memory-turn.js';
import type { WireCounter } from './pg-wire-count.js';
import { mean, percentile, round } from './util.js';

export interface TurnTimes {
  mean: number;
  p95: number;
}

/** Every turn on every side, in turn; the times (ms) of each side's turns from `timedFrom` on. */
export async function timeTurns(
  sides: readonly MemoryTurnSide[],
  turns: readonly MemoryTurn[],
  timedFrom = 0,
): Promise<TurnTimes[]> {
  const times = sides.map((): number[] => []);
  for (const [i, t] of turns.entries()) {
    for (const [s, side] of sides.entries()) {
      const start = performance.now();
      await side.turn(t);
      if (i >= timedFrom) times[s]!.push(performance.now() - start);
    }
  }
  return times.map((list) => {
    const sorted = [...list].sort((a, b) => a - b);
    return { mean: round(mean(list), 3), p95: round(percentile(sorted, 95), 3) };
  });
}

export interface TurnWire {
  statements: number;
  syncs: number;
  roundTrips: number;
}

/**
 * Per-turn statements, syncs and round trips of one side whose connections go through `counter`: the side's first
 * `warmup` turns are not counted (a thread's or user's first turn creates what later turns read).
 */
export async function countTurns(
  side: MemoryTurnSide,
  turns: readonly MemoryTurn[],
  counter: WireCounter,
  warmup: number,
): Promise<TurnWire> {
  for (const t of turns.slice(0, warmup)) await side.turn(t);
  counter.take();
  const counted = turns.slice(warmup);
  for (const t of counted) await side.turn(t);
  const { statements, syncs, roundTrips } = counter.take();
  const perTurn = (n: number) => round(n / counted.length, 2);
  return { statements: perTurn(statements), syncs: perTurn(syncs), roundTrips: perTurn(roundTrips) };
}
