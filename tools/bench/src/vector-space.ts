/**
 * The vectors the vector-index benches (pgvector, sqlite-vec) store and query: clustered, so that recall
 * means something (uniform random vectors in high dimensions are all about equally far apart): `CLUSTERS`
 * seeded random centres, each point a centre plus Gaussian noise, `DIMENSIONS` components. Queries are
 * fresh points of the same clusters.
 */
import { seededRandom } from './util.js';

export const DIMENSIONS = 128;
export const CLUSTERS = 100;

/** Seeded clustered vectors: `point(i)` is the i-th point, `query(i)` a fresh point of a cluster. */
export function clusteredSpace(seed: number) {
  const random = seededRandom(seed);
  const gauss = () => {
    const u = Math.max(random(), 1e-12);
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
  };
  const centres = Array.from({ length: CLUSTERS }, () => Array.from({ length: DIMENSIONS }, gauss));
  const around = (centre: number[]) => centre.map((x) => x + 0.35 * gauss());
  return {
    point: (i: number) => around(centres[i % CLUSTERS]!),
    query: () => around(centres[Math.floor(random() * CLUSTERS)]!),
  };
}

export function unit(v: readonly number[]): Float64Array {
  const n = Math.hypot(...v) || 1;
  return Float64Array.from(v, (x) => x / n);
}

/** The exact top `k` ids by cosine similarity. */
export function bruteForce(
  points: ReadonlyMap<string, Float64Array>,
  query: readonly number[],
  k: number,
): string[] {
  const q = unit(query);
  const scored: Array<[string, number]> = [];
  for (const [id, p] of points) {
    let dot = 0;
    for (let i = 0; i < q.length; i++) dot += q[i]! * p[i]!;
    scored.push([id, dot]);
  }
  return scored
    .sort((a, b) => b[1] - a[1])
    .slice(0, k)
    .map(([id]) => id);
}
