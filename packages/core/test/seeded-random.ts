/**
 * A seeded pseudo-random number in [0, 1), so a failing randomized test reproduces (mulberry32: 32-bit
 * integer arithmetic, period 2^32). Not the textbook LCG computed in doubles, which loses its low bits
 * past 2^53 and cycles after about 10,500 draws.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}
