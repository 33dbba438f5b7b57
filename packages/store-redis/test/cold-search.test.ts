import { setTimeout as sleep } from 'node:timers/promises';
import type { Fact } from '@kioku/core';
import { factSearchText, LexicalIndex } from '@kioku/core/adapter';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { RedisFactStore } from '../src/index.js';
import { encodeIndexState } from '../src/index-state.js';
import { closeSharedClient, deletePrefix, freshPrefix, noServer, redisUrl, sharedClient } from './helpers.js';

// The first ranked search of a new process restores the stored index (`…:idx`) and replays the changes
// since it without loading the partition's records; reads that need every record load them later. Each
// "process" is a store with its own client, and so its own empty cache.
const scope = { userId: 'u' };
const names = ['Alice', 'Bruno', 'Carmen', 'Dave'];
const topics = ['gardening', 'violin', 'sailing', 'chess', 'pottery'];
const QUERIES = ['Alice gardening', 'violin lessons', 'Who likes sailing?', 'chess Dave', 'w3 pottery'];

/** Fact i: a name, a topic, and i filler words, so no two facts score alike (no ties to order). */
const content = (i: number, topic = topics[i % topics.length]) =>
  `${names[i % names.length]} likes ${topic} ${Array.from({ length: i }, (_, k) => `w${k % 7}`).join(' ')}`;

describe.skipIf(noServer)('RedisFactStore: the first search of a new process', () => {
  const clients: Redis[] = [];
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.quit()));
    await closeSharedClient();
  });

  function newProcess(prefix: string): { store: RedisFactStore; client: Redis } {
    const client = new Redis(redisUrl);
    clients.push(client);
    return { store: new RedisFactStore({ client, prefix }), client };
  }

  const idxKey = (prefix: string) => `${prefix}facts:{u}:-:idx`;
  const metaKey = (prefix: string) => `${prefix}facts:{u}:-:meta`;

  /** Wait until the stored index describes the partition's current version. */
  async function storedCurrent(prefix: string): Promise<string> {
    // Polls until it is; the bound only detects a hang (a minute or more of 10 ms waits).
    for (let i = 0; i < 6_000; i++) {
      const [at, ver] = [
        (await sharedClient().get(idxKey(prefix)))?.split('\n')[1],
        await sharedClient().hget(metaKey(prefix), 'ver'),
      ];
      if (at !== undefined && at === ver) return at;
      await sleep(10);
    }
    throw new Error('the stored index did not become current');
  }

  /** 60 facts, searched once (which stores the index), then changed by another process: 12 inserts, 6 updates, 6 deletes. */
  async function behind(prefix: string) {
    const writer = newProcess(prefix).store;
    const facts: Fact[] = [];
    for (let i = 0; i < 60; i++)
      facts.push(
        await writer.create(scope, { content: content(i), category: `c${i % 3}`, tags: [`t${i % 2}`] }),
      );
    await writer.search(scope, { query: 'Alice' });
    const savedAt = await storedCurrent(prefix);
    const other = newProcess(prefix).store;
    for (let i = 60; i < 72; i++)
      await other.create(scope, { content: content(i), category: `c${i % 3}`, tags: [`t${i % 2}`] });
    for (let i = 0; i < 6; i++)
      await other.update(scope, facts[i * 7]!.id, { content: content(i * 7, 'chess') });
    for (let i = 0; i < 6; i++) await other.delete(scope, facts[i * 7 + 3]!.id);
    expect(await sharedClient().get(idxKey(prefix))).toMatch(new RegExp(`^[^\\n]*\\n${savedAt}\\n`));
    return { writer, other };
  }

  /** What a full rebuild returns: core's index over every stored fact, hits as [id, score, content]. */
  async function rebuilt(prefix: string, query: string, keep: (fact: Fact) => boolean = () => true) {
    const all = await newProcess(prefix).store.list(scope);
    const index = new LexicalIndex();
    for (const fact of all) index.set(fact.id, factSearchText(fact));
    const byId = new Map(all.map((f) => [f.id, f]));
    return index
      .search(query, { limit: 100, filter: (id) => keep(byId.get(id)!) })
      .map((h) => [h.id, h.score, byId.get(h.id)!.content]);
  }

  const hitsOf = async (store: RedisFactStore, query: string, extra: object = {}) =>
    (await store.search(scope, { query, limit: 100, ...extra })).map((h) => [
      h.fact.id,
      h.score,
      h.fact.content,
    ]);

  it('with a stored index behind the records returns exactly what a full rebuild returns, without loading the records', async () => {
    const prefix = freshPrefix();
    try {
      await behind(prefix);
      for (const query of QUERIES) {
        const { store, client } = newProcess(prefix);
        const multi = vi.spyOn(client, 'multi');
        const hgetall = vi.spyOn(client, 'hgetall');
        const hits = await hitsOf(store, query);
        expect(hits.length).toBeGreaterThan(0);
        expect(hits).toEqual(await rebuilt(prefix, query));
        // The partition's records were not loaded: no MULTI (load) and no HGETALL.
        expect(multi).not.toHaveBeenCalled();
        expect(hgetall).not.toHaveBeenCalled();
      }
    } finally {
      await deletePrefix(prefix);
    }
  });

  it('a new process that replayed 100 changes or more stores the index again, once its search has returned', async () => {
    const prefix = freshPrefix();
    try {
      const { other } = await behind(prefix);
      for (let i = 0; i < 100; i++) await other.create(scope, { content: content(100 + i, 'pottery') });
      const version = await sharedClient().hget(metaKey(prefix), 'ver');
      const reader = newProcess(prefix).store;
      expect(await hitsOf(reader, 'pottery')).toEqual(await rebuilt(prefix, 'pottery'));
      expect(await storedCurrent(prefix)).toBe(version);
    } finally {
      await deletePrefix(prefix);
    }
  });

  it('a copy without records follows later changes, including to hits it has already returned', async () => {
    const prefix = freshPrefix();
    try {
      const { other } = await behind(prefix);
      const reader = newProcess(prefix).store;
      const [first] = await reader.search(scope, { query: 'Alice gardening', limit: 1 });
      await other.update(scope, first!.fact.id, { content: 'Alice now only likes origami' });
      const [origami] = await reader.search(scope, { query: 'origami', limit: 1 });
      expect(origami?.fact).toEqual(await other.get(scope, first!.fact.id));
      await other.delete(scope, first!.fact.id);
      await other.create(scope, { content: 'Erin likes gardening too' });
      for (const query of [...QUERIES, 'origami', 'Erin'])
        expect(await hitsOf(reader, query)).toEqual(await rebuilt(prefix, query));
    } finally {
      await deletePrefix(prefix);
    }
  });

  it('filters, list, count and categories are right on a cold partition and after a search without records', async () => {
    const prefix = freshPrefix();
    try {
      const { other } = await behind(prefix);
      const truth = newProcess(prefix).store;
      const check = async (store: RedisFactStore) => {
        expect(await store.list(scope)).toEqual(await truth.list(scope));
        expect(await store.list(scope, { category: 'c1', order: 'updated' })).toEqual(
          await truth.list(scope, { category: 'c1', order: 'updated' }),
        );
        expect(await store.count(scope)).toBe((await truth.list(scope)).length);
        expect(await store.count(scope, { tags: ['t0'] })).toBe(
          (await truth.list(scope, { tags: ['t0'] })).length,
        );
        expect(await store.categories(scope)).toEqual(await truth.categories(scope));
        const byCategory = await hitsOf(store, 'Alice chess', { category: 'c2' });
        expect(byCategory.length).toBeGreaterThan(0);
        expect(byCategory).toEqual(await rebuilt(prefix, 'Alice chess', (f) => f.category === 'c2'));
        const byTag = await hitsOf(store, 'Alice chess', { tags: ['t1'] });
        expect(byTag.length).toBeGreaterThan(0);
        expect(byTag).toEqual(await rebuilt(prefix, 'Alice chess', (f) => f.tags.includes('t1')));
      };
      // Cold: the first read of the process needs every record.
      await check(newProcess(prefix).store);
      // Warm without records first, then changes by another process, then reads that need every record.
      const reader = newProcess(prefix).store;
      await reader.search(scope, { query: 'violin' });
      await other.create(scope, { content: content(80), category: 'c9', tags: ['t0'] });
      await other.update(scope, (await truth.list(scope))[5]!.id, { category: 'c9' });
      await other.delete(scope, (await truth.list(scope))[6]!.id);
      await check(reader);
      for (const query of QUERIES) expect(await hitsOf(reader, query)).toEqual(await rebuilt(prefix, query));
    } finally {
      await deletePrefix(prefix);
    }
  });

  it('a stored index of an unknown format version, truncated, of another format or empty is ignored, and a rebuilt one stored', async () => {
    const prefix = freshPrefix();
    try {
      await behind(prefix);
      const [epoch, at] = (await sharedClient().get(idxKey(prefix)))!.split('\n');
      // As many entries as the partition has after the 24 changes are replayed, but not usable.
      const foreign = new LexicalIndex();
      for (let i = 0; i < 60 - 12; i++) foreign.set(`other-${i}`, 'zebra');
      const binary = encodeIndexState(foreign.exportState());
      const otherVersion = Buffer.from(binary);
      otherVersion.writeUInt32LE(2, 4);
      for (const state of [
        otherVersion,
        binary.subarray(0, binary.length - 4),
        Buffer.from(JSON.stringify({ ...foreign.exportState(), version: 99 })),
        Buffer.from(JSON.stringify({ format: 'something-else' })),
        Buffer.from(''),
      ]) {
        await sharedClient().set(idxKey(prefix), Buffer.concat([Buffer.from(`${epoch}\n${at}\n`), state]));
        const reader = newProcess(prefix).store;
        for (const query of ['zebra', ...QUERIES])
          expect(await hitsOf(reader, query)).toEqual(await rebuilt(prefix, query));
        await storedCurrent(prefix);
      }
    } finally {
      await deletePrefix(prefix);
    }
  });
});
