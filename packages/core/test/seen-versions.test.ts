import { describe, expect, it } from 'vitest';
import { SeenVersions } from '../src/model/seen-versions.js';

describe('SeenVersions', () => {
  it('keeps the 10,000 most recent sightings and drops the oldest first, a sighting again making an id recent', () => {
    const seen = new SeenVersions();
    // The reference: ids in order of their last sighting, oldest first.
    const order: string[] = [];
    let seed = 3;
    const random = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % n;
    };
    for (let step = 0; step < 40_000; step++) {
      // Mostly new ids, some seen again (recent or long ago).
      const id = random(4) === 0 && order.length > 0 ? order[random(order.length)]! : `f${step}`;
      seen.note({ id, version: step });
      const at = order.indexOf(id);
      if (at !== -1) order.splice(at, 1);
      else if (order.length >= 10_000) order.shift();
      order.push(id);
    }
    for (const id of order) expect(seen.versionOf(id)).toBeDefined();
    expect(seen.versionOf(order[order.length - 1]!)).toBe(39_999);
    // Every id dropped is one the reference dropped.
    const kept = new Set(order);
    for (let step = 0; step < 40_000; step++) {
      if (!kept.has(`f${step}`)) expect(seen.versionOf(`f${step}`)).toBeUndefined();
    }
  });
});
