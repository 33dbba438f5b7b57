import { setTimeout as sleep } from 'node:timers/promises';
import { LexicalIndex } from '@kioku/core/adapter';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { RedisFactStore } from '../src/index.js';
import { decodeIndexState } from '../src/index-state.js';
import { closeSharedClient, deletePrefix, freshPrefix, noServer, redisUrl, sharedClient } from './helpers.js';

// A search stores the partition's index (`…:idx`) so that the first search of a new process replays the
// changes since instead of indexing every fact again. Each "process" here is a store with its own client
// and so its own empty cache, exactly what a new process starts with.
const scope = { userId: 'u' };

describe.skipIf(noServer)('RedisFactStore stored search index', () => {
  const clients: Redis[] = [];
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.quit()));
    await closeSharedClient();
  });

  function newProcess(prefix: string): RedisFactStore {
    const client = new Redis(redisUrl);
    clients.push(client);
    return new RedisFactStore({ client, prefix });
  }

  const idxKey = (prefix: string) => `${prefix}facts:{u}:-:idx`;
  const stored = () => sharedClient();

  /** The stored index's `epoch`, `version` and state once a search has written it (it is written after the search returns). */
  async function storedIndex(prefix: string, version?: string) {
    // Polls until it is there; the bound only detects a hang (a minute or more of 10 ms waits).
    for (let i = 0; i < 6_000; i++) {
      const value = await stored().get(idxKey(prefix));
      if (value !== null) {
        const [epoch, at, ...rest] = value.split('\n');
        if (version === undefined || at === version)
          return { epoch: epoch!, version: at!, state: rest.join('\n') };
      }
      await sleep(10);
    }
    throw new Error('no stored index appeared');
  }

  async function seeded(prefix: string) {
    const writer = newProcess(prefix);
    const facts = [];
    for (const content of [
      'Alice bought a red bike',
      'Bob went to Paris in May',
      'Alice has a cat named Luna',
    ]) {
      facts.push(await writer.create(scope, { content }));
    }
    await writer.search(scope, { query: 'Alice' });
    return { writer, facts, index: await storedIndex(prefix) };
  }

  /** The ids of the best `limit` hits, sorted (feedback may add weaker hits after them). */
  const ids = async (store: RedisFactStore, query: string, limit = 8) =>
    (await store.search(scope, { query, limit })).map((h) => h.fact.id).sort();

  it('a new process sees creates, updates and deletes made after the index was stored', async () => {
    const prefix = freshPrefix();
    try {
      const { writer, facts, index } = await seeded(prefix);
      const [bike, trip, cat] = facts;
      const added = await writer.create(scope, { content: 'Carol plays the violin' });
      await writer.update(scope, bike!.id, { content: 'Alice sold her red bike to Dave' });
      await writer.delete(scope, cat!.id);

      const reader = newProcess(prefix);
      expect(await ids(reader, 'violin', 1)).toEqual([added.id]);
      expect(await ids(reader, 'Dave sold', 1)).toEqual([bike!.id]);
      expect(await ids(reader, 'cat Luna')).not.toContain(cat!.id);
      expect(await ids(reader, 'Paris', 1)).toEqual([trip!.id]);
      expect(await reader.count(scope)).toBe(3);
      // Three changes are replayed, not worth storing the index again.
      expect((await stored().get(idxKey(prefix)))?.split('\n')[1]).toBe(index.version);

      // And the reader's copy keeps following the writer.
      await writer.delete(scope, added.id);
      expect(await ids(reader, 'violin')).not.toContain(added.id);
    } finally {
      await deletePrefix(prefix);
    }
  });

  it('the first search of a new process uses the stored index rather than indexing the facts again', async () => {
    const prefix = freshPrefix();
    try {
      const { facts, index } = await seeded(prefix);
      // A stored index that (wrongly) puts the first fact under "zebra": only a reader that trusted it finds it.
      const doctored = new LexicalIndex();
      doctored.set(facts[0]!.id, 'zebra');
      doctored.set(facts[1]!.id, facts[1]!.content);
      doctored.set(facts[2]!.id, facts[2]!.content);
      await stored().set(
        idxKey(prefix),
        `${index.epoch}\n${index.version}\n${JSON.stringify(doctored.exportState())}`,
      );
      expect(await ids(newProcess(prefix), 'zebra')).toEqual([facts[0]!.id]);
    } finally {
      await deletePrefix(prefix);
    }
  });

  it('a corrupt, foreign-epoch or mismatched stored index is ignored, and a rebuilt one stored', async () => {
    const prefix = freshPrefix();
    try {
      const { facts, index } = await seeded(prefix);
      const one = new LexicalIndex();
      one.set(facts[0]!.id, 'zebra');
      for (const bad of [
        `${index.epoch}\n${index.version}\n{"format":"kioku.lexical-index",`,
        `${index.epoch}\nnot-a-version\n${index.state}`,
        `another-epoch\n${index.version}\n${index.state}`,
        `${index.epoch}\n999999\n${index.state}`,
        // Parses, but holds one fact of three.
        `${index.epoch}\n${index.version}\n${JSON.stringify(one.exportState())}`,
        'garbage',
      ]) {
        await stored().set(idxKey(prefix), bad);
        const reader = newProcess(prefix);
        expect(await ids(reader, 'Alice', 2)).toEqual([facts[0]!.id, facts[2]!.id].sort());
        expect(await ids(reader, 'zebra')).toEqual([]);
        expect(await storedIndex(prefix, index.version)).toEqual(index);
      }
    } finally {
      await deletePrefix(prefix);
    }
  });

  it('a process that keeps searching while others write stores its index again every 500 changes', async () => {
    const prefix = freshPrefix();
    try {
      const { writer } = await seeded(prefix);
      const other = newProcess(prefix);
      for (let i = 0; i < 500; i++)
        await other.create(scope, { content: `note number ${i} about gardening` });
      await writer.search(scope, { query: 'gardening' });
      await storedIndex(prefix, '503');
      const reader = newProcess(prefix);
      expect(await reader.count(scope)).toBe(503);
      const value = (await stored().getBuffer(idxKey(prefix)))!;
      const state = value.subarray(value.indexOf('\n', value.indexOf('\n') + 1) + 1);
      expect(LexicalIndex.fromState(decodeIndexState(state)).size).toBe(503);
    } finally {
      await deletePrefix(prefix);
    }
  });

  it('a restore makes the stored index stale, and it is deleted with the partition', async () => {
    const prefix = freshPrefix();
    try {
      const { writer } = await seeded(prefix);
      const snapshot = await writer.snapshot(scope);
      const replaced = { ...snapshot, records: snapshot.records.slice(0, 1) };
      await writer.restore(replaced);
      expect(await stored().exists(idxKey(prefix))).toBe(0);
      const reader = newProcess(prefix);
      expect(await ids(reader, 'Alice Bob Luna')).toEqual([snapshot.records[0]!.id]);
      await storedIndex(prefix, '0');
    } finally {
      await deletePrefix(prefix);
    }
  });
});
