import { describe, expect, it } from 'vitest';
import { SeenVersions } from '../src/model/seen-versions.js';
import { seededRandom } from './seeded-random.js';

describe('SeenVersions', () => {
  it('keeps at most 10,000 ids, the most recently seen of them always, a sighting again making an id recent', () => {
    const seen = new SeenVersions();
    // The reference: ids in order of their last sighting, oldest first.
    const order: string[] = [];
    const uniform = seededRandom(3);
    const random = (n: number) => Math.floor(uniform() * n);
    for (let step = 0; step < 40_000; step++) {
      // Mostly new ids, some seen again (recent or long ago).
      const id = random(4) === 0 && order.length > 0 ? order[random(order.length)]! : `f${step}`;
      seen.note({ id, version: step });
      const at = order.indexOf(id);
      if (at !== -1) order.splice(at, 1);
      else if (order.length >= 10_000) order.shift();
      order.push(id);
    }
    // An id seen again among the newest eighth is not moved (see note()), so the LRU order is exact up to
    // 1,250 sightings: the 8,750 most recently seen ids are always kept.
    for (const id of order.slice(-8_750)) expect(seen.versionOf(id)).toBeDefined();
    expect(seen.versionOf(order[order.length - 1]!)).toBe(39_999);
    let kept = 0;
    for (let step = 0; step < 40_000; step++) if (seen.versionOf(`f${step}`) !== undefined) kept++;
    expect(kept).toBeLessThanOrEqual(10_000);
    expect(order).toHaveLength(10_000);
    expect(kept).toBeGreaterThanOrEqual(8_750);
  });

  it('reports the version last shown for an id seen again soon after', () => {
    const seen = new SeenVersions();
    seen.note({ id: 'a', version: 1 });
    seen.note({ id: 'b', version: 1 });
    seen.note({ id: 'a', version: 3 });
    expect(seen.versionOf('a')).toBe(3);
    expect(seen.versionOf('b')).toBe(1);
  });
});
