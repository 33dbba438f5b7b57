import { describe, expect, it } from 'vitest';
import {
  HEAD_IDS,
  InjectedMemoryTracker,
  MAX_CHUNKS,
  RECALL_INJECTED_CHUNK_PREFIX,
  RECALL_INJECTED_KEY,
} from '../src/memory/facts/recall/injected.js';
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

  /** A session store that records every k-v write. */
  class RecordingSessions extends InMemorySessionStore {
    readonly writes: { key: string; value: string }[] = [];
    override async kvSet(...args: Parameters<InMemorySessionStore['kvSet']>) {
      this.writes.push({ key: args[2], value: args[3] });
      return super.kvSet(...args);
    }
  }

  const idsFrom = (from: number, count: number) => Array.from({ length: count }, (_, i) => `id${from + i}`);
  const kvKeys = async (sessions: InMemorySessionStore, id: string) =>
    (await sessions.kvList(alice, id)).map((e) => e.key);

  it('writes a head of at most HEAD_IDS ids a turn and each sealed chunk once, keeping the last 10,000 ids', async () => {
    const sessions = new RecordingSessions();
    const { id } = await sessions.create(alice);
    const tracker = new InjectedMemoryTracker(sessions);
    const total = (MAX_CHUNKS + 3) * HEAD_IDS;
    for (let n = 0; n < total; n += 8) await tracker.add(alice, id, idsFrom(n, 8));

    const kept = (MAX_CHUNKS + 1) * HEAD_IDS;
    expect([...(await tracker.load(alice, id))]).toEqual(idsFrom(total - kept, kept));
    // Another process (a fresh tracker) reads the same ids from the store.
    expect([...(await new InjectedMemoryTracker(sessions).load(alice, id))]).toEqual(
      idsFrom(total - kept, kept),
    );

    const heads = sessions.writes.filter((w) => w.key === RECALL_INJECTED_KEY);
    const chunks = sessions.writes.filter((w) => w.key.startsWith(RECALL_INJECTED_CHUNK_PREFIX));
    expect(heads).toHaveLength(total / 8);
    const largestHead = Math.max(...heads.map((w) => w.value.length));
    expect(largestHead).toBeLessThan(JSON.stringify(idsFrom(total, HEAD_IDS)).length + 60 * MAX_CHUNKS);
    expect(chunks).toHaveLength(total / HEAD_IDS - 1);
    expect(new Set(chunks.map((w) => w.key)).size).toBe(chunks.length);
    // The chunks past MAX_CHUNKS were deleted: the session holds the head and the chunks it names.
    const head = JSON.parse((await sessions.kvGet(alice, id, RECALL_INJECTED_KEY))!.value);
    expect(head.sealed).toHaveLength(MAX_CHUNKS);
    expect((await kvKeys(sessions, id)).sort()).toEqual([RECALL_INJECTED_KEY, ...head.sealed].sort());
  });

  it('keeps a list from before chunks (one long array) and seals it whole on the next add', async () => {
    const sessions = new InMemorySessionStore();
    const { id } = await sessions.create(alice);
    await sessions.kvSet(alice, id, RECALL_INJECTED_KEY, JSON.stringify(idsFrom(0, 5_000)));
    const tracker = new InjectedMemoryTracker(sessions);
    expect((await tracker.load(alice, id)).has('id4999')).toBe(true);
    await tracker.add(alice, id, ['new', 'id17']);
    expect(JSON.parse((await sessions.kvGet(alice, id, RECALL_INJECTED_KEY))!.value)).toMatchObject({
      ids: ['new'],
    });
    expect([...(await new InjectedMemoryTracker(sessions).load(alice, id))]).toEqual([
      ...idsFrom(0, 5_000),
      'new',
    ]);
  });

  it('two app instances sealing at once lose no id and leave no chunk behind', async () => {
    const sessions = new InMemorySessionStore();
    const { id } = await sessions.create(alice);
    const a = new InjectedMemoryTracker(sessions);
    const b = new InjectedMemoryTracker(sessions);
    for (let n = 0; n < 3 * HEAD_IDS; n += 10) {
      await Promise.all([a.add(alice, id, idsFrom(n, 5)), b.add(alice, id, idsFrom(n + 5, 5))]);
    }
    const all = new Set(await a.load(alice, id));
    expect(all.size).toBe(3 * HEAD_IDS);
    for (const x of idsFrom(0, 3 * HEAD_IDS)) expect(all.has(x)).toBe(true);
    expect(new Set(await b.load(alice, id))).toEqual(all);
    const head = JSON.parse((await sessions.kvGet(alice, id, RECALL_INJECTED_KEY))!.value);
    expect((await kvKeys(sessions, id)).sort()).toEqual([RECALL_INJECTED_KEY, ...head.sealed].sort());
  });

  it('a missing chunk only makes its ids eligible again; a head naming another key is unreadable and never deletes it', async () => {
    const sessions = new InMemorySessionStore();
    const { id } = await sessions.create(alice);
    const tracker = new InjectedMemoryTracker(sessions);
    for (let n = 0; n < HEAD_IDS + 10; n += 10) await tracker.add(alice, id, idsFrom(n, 10));
    const head = JSON.parse((await sessions.kvGet(alice, id, RECALL_INJECTED_KEY))!.value);
    await sessions.kvDelete(alice, id, head.sealed[0]);
    const fresh = await new InjectedMemoryTracker(sessions).load(alice, id);
    expect(fresh.has('id0')).toBe(false);
    expect(fresh.has(`id${HEAD_IDS}`)).toBe(true);

    await sessions.kvSet(alice, id, 'city', 'Oslo');
    await sessions.kvSet(alice, id, RECALL_INJECTED_KEY, JSON.stringify({ sealed: ['city'], ids: ['x'] }));
    expect([...(await tracker.load(alice, id))]).toEqual([]);
    for (let n = 0; n < (MAX_CHUNKS + 2) * HEAD_IDS; n += 50) await tracker.add(alice, id, idsFrom(n, 50));
    expect((await sessions.kvGet(alice, id, 'city'))?.value).toBe('Oslo');
  });

  it('keeps two sessions apart when their stored lists are equal', async () => {
    const sessions = new InMemorySessionStore();
    const a = await sessions.create(alice);
    const b = await sessions.create(alice);
    const tracker = new InjectedMemoryTracker(sessions);
    await tracker.add(alice, a.id, ['f1']);
    await tracker.add(alice, b.id, ['f1']);
    const seenByB = await tracker.load(alice, b.id);
    await tracker.add(alice, a.id, ['f2']);
    expect(seenByB.has('f2')).toBe(false);
    expect([...(await tracker.load(alice, b.id))]).toEqual(['f1']);
  });

  it("add on top of the turn's own read writes without reading the head again; a write meanwhile is read and kept", async () => {
    class CountingSessions extends InMemorySessionStore {
      reads = 0;
      override async kvGet(...args: Parameters<InMemorySessionStore['kvGet']>) {
        this.reads++;
        return super.kvGet(...args);
      }
    }
    const sessions = new CountingSessions();
    const { id } = await sessions.create(alice);
    const tracker = new InjectedMemoryTracker(sessions);
    const read = await tracker.load(alice, id);
    sessions.reads = 0;
    await tracker.add(alice, id, ['a', 'b'], read);
    expect(sessions.reads).toBe(0);
    // Another instance adds to the same session after this one's read: the write meets CONFLICT, reads, keeps both.
    const stale = await tracker.load(alice, id);
    await new InjectedMemoryTracker(sessions).add(alice, id, ['c']);
    await tracker.add(alice, id, ['d'], stale);
    expect([...(await tracker.load(alice, id))]).toEqual(['a', 'b', 'c', 'd']);
  });
});
