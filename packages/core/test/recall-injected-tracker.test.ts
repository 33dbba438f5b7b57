import { describe, expect, it } from 'vitest';
import { InjectedMemoryTracker, RECALL_INJECTED_KEY } from '../src/memory/facts/recall/injected.js';
import { InMemorySessionStore } from '../src/store/sessions/memory.js';
import { seededRandom } from './seeded-random.js';

const alice = { userId: 'alice' };

describe('InjectedMemoryTracker', () => {
  it('stores exactly the JSON of every id added, in order and once, whatever the stored value was', async () => {
    const sessions = new InMemorySessionStore();
    const { id } = await sessions.create(alice);
    const tracker = new InjectedMemoryTracker(sessions);
    const random = seededRandom(5);
    const expected: string[] = [];
    const stored = async () => (await sessions.kvGet(alice, id, RECALL_INJECTED_KEY))?.value;
    for (let turn = 0; turn < 60; turn++) {
      if (turn === 20) {
        // Another process wrote the list in another form (spaces, a repeated id).
        await sessions.kvSet(
          alice,
          id,
          RECALL_INJECTED_KEY,
          `[ ${expected.map((x) => JSON.stringify(x)).join(' , ')}, "${expected[0]}" ]`,
        );
      }
      const ids = Array.from({ length: Math.floor(random() * 5) }, () => `f${Math.floor(random() * 150)}`);
      await tracker.add(alice, id, ids);
      for (const x of ids) if (!expected.includes(x)) expected.push(x);
      if (expected.length > 0 || turn === 20) expect(await stored()).toBe(JSON.stringify(expected));
      expect([...(await tracker.load(alice, id))]).toEqual(expected);
    }
  });
});
