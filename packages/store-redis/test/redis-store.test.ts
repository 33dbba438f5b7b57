import { systemClock } from '@kioku/core/adapter';
import { ManualClock } from '@kioku/core/testing';
import { expectKiokuError, randomId, randomScope } from '@kioku/store-test-suite';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  createRedisStores,
  decodePart,
  encodePart,
  RedisConnection,
  RedisWorkingMemoryStore,
} from '../src/index.js';
import {
  closeSharedClient,
  deletePrefix,
  freshPrefix,
  keysUnder,
  noServer,
  redisUrl,
  sharedClient,
} from './helpers.js';

type Stores = ReturnType<typeof createRedisStores>;

/** Run `count` calls at once. */
const times = <T>(count: number, fn: (i: number) => Promise<T>) =>
  Promise.all(Array.from({ length: count }, (_, i) => fn(i)));

describe.skipIf(noServer)('Redis stores: adapter specifics', () => {
  const opened: Array<{ stores: Stores; prefix: string }> = [];

  /** Stores on the shared client under a fresh prefix (deleted after the test). */
  const open = (options: Partial<Parameters<typeof createRedisStores>[0]> = {}) => {
    const prefix = options.prefix ?? freshPrefix();
    const stores = createRedisStores({ client: sharedClient(), prefix, ...options });
    opened.push({ stores, prefix });
    return stores;
  };

  /** A second set of stores over the same prefix with its own client (another process's view). */
  const twinOf = (prefix: string, options: Partial<Parameters<typeof createRedisStores>[0]> = {}) => {
    const stores = createRedisStores({ url: redisUrl, prefix, ...options });
    opened.push({ stores, prefix });
    return stores;
  };

  afterEach(async () => {
    for (const { stores, prefix } of opened.splice(0)) {
      await stores.close();
      await deletePrefix(prefix);
    }
  });
  afterAll(closeSharedClient);

  const raw = () => sharedClient();

  describe('keys', () => {
    it('encodes every user-controlled part injectively, without separators or glob characters', () => {
      const samples = [
        'alice',
        'a:b',
        'a}b{c',
        '*',
        'x?[y]\\',
        '%41',
        'A',
        'a/b/c',
        'ü東',
        '😀',
        '',
        '-',
        ' ',
      ];
      const encoded = samples.map(encodePart);
      expect(new Set(encoded).size).toBe(samples.length);
      for (const [i, e] of encoded.entries()) {
        expect(e).toMatch(/^[A-Za-z0-9_.@+%-]*$/);
        expect(decodePart(e)).toBe(samples[i]);
      }
      expect(encodePart('user-1.x@y+z_')).toBe('user-1.x@y+z_');
      expect(encodePart('session/abc/x')).toBe('session%2Fabc%2Fx');
    });

    it('lays records out under the prefix as documented (checked on the server, not through the store)', async () => {
      const prefix = freshPrefix();
      const s = open({ prefix });
      const scope = { userId: 'alice', agentId: 'bot' };
      const fact = await s.facts.create(scope, { content: 'Prefers tea', id: 'f1' });
      await s.working.set(scope, 'session/abc/notes', 'remember this');
      const session = await s.sessions.create(scope);
      await s.sessions.kvSet(scope, session.id, 'a:b*c', 'v');
      await s.sessions.transcriptAppend(scope, session.id, { role: 'user', content: 'hi' });
      await s.plans.create({ ...scope, threadId: 't1' }, { goal: 'Ship it', steps: ['one'] });
      await s.details.create({ userId: 'alice' }, { description: 'log', content: 'output', id: 'd1' });
      await s.documents.create(scope, { id: 'doc1', title: 'Guide', text: 'Some text.' });

      const keys = (await keysUnder(prefix)).map((k) => k.slice(prefix.length)).sort();
      const sid = session.id;
      expect(keys).toEqual(
        [
          'details:{alice}:log',
          'details:{alice}:meta',
          'details:{alice}:ord',
          'details:{alice}:rec',
          'documents:{alice}:bot:log',
          'documents:{alice}:bot:meta',
          'documents:{alice}:bot:ord',
          'documents:{alice}:bot:rec',
          'facts:{alice}:bot:log',
          'facts:{alice}:bot:meta',
          'facts:{alice}:bot:ord',
          'facts:{alice}:bot:rec',
          'plans:{alice}:bot:t1',
          'sessions:{alice}:bot:idx',
          'sessions:{alice}:bot:meta',
          'sessions:{alice}:bot:ord',
          `sessions:{alice}:bot:s:${sid}:kv`,
          `sessions:{alice}:bot:s:${sid}:kvo`,
          `sessions:{alice}:bot:s:${sid}:tr`,
          'working:{alice}:bot:e:session%2Fabc%2Fnotes',
          'working:{alice}:bot:exp',
          'working:{alice}:bot:meta',
          'working:{alice}:bot:ns:session%2Fabc',
        ].sort(),
      );
      // The record itself, read straight from the hash.
      expect(JSON.parse((await raw().hget(`${prefix}facts:{alice}:bot:rec`, 'f1'))!)).toEqual(fact);
      // Session k-v keys are hash fields, stored verbatim: never part of a key name.
      expect(await raw().hkeys(`${prefix}sessions:{alice}:bot:s:${sid}:kv`)).toEqual(['a:b*c']);
      // No agent is `-`, which no agent id can be.
      await s.facts.create({ userId: 'alice' }, { content: 'no agent' });
      expect(await raw().exists(`${prefix}facts:{alice}:-:rec`)).toBe(1);
    });

    it('a prefix with glob characters is matched literally: snapshots never see a look-alike prefix', async () => {
      const base = freshPrefix();
      const star = open({ prefix: `${base}a*:` });
      const plain = open({ prefix: `${base}ab:` });
      const question = open({ prefix: `${base}a?[x]\\:` });
      await star.facts.create({ userId: 'u1' }, { content: 'under the star prefix' });
      await plain.facts.create({ userId: 'u1' }, { content: 'under the plain prefix' });
      await question.facts.create({ userId: 'u1' }, { content: 'under the bracket prefix' });
      for (const [stores, content] of [
        [star, 'under the star prefix'],
        [plain, 'under the plain prefix'],
        [question, 'under the bracket prefix'],
      ] as const) {
        const all = await stores.facts.snapshot({ allUsers: true });
        expect(all.records.map((f) => f.content)).toEqual([content]);
      }
      await star.connection.deleteAll();
      expect(await plain.facts.list({ userId: 'u1' })).toHaveLength(1);
      expect(await question.facts.list({ userId: 'u1' })).toHaveLength(1);
    });

    it('a user whose id extends another’s (alice, alice2, alice.x) is a different partition in every kind', async () => {
      const s = open();
      for (const userId of ['alice', 'alice2', 'alice.x', 'alic']) {
        await s.facts.create({ userId }, { content: `fact of ${userId}` });
        await s.working.set({ userId }, 'session/s1/k', `entry of ${userId}`);
        await s.details.create({ userId }, { description: 'd', content: `detail of ${userId}` });
        await s.plans.create({ userId, threadId: 't' }, { goal: `plan of ${userId}` });
        await s.sessions.create({ userId });
      }
      for (const store of [s.facts, s.working, s.details, s.plans, s.sessions] as const) {
        const env = await (store as { snapshot: Stores['facts']['snapshot'] }).snapshot({ userId: 'alice' });
        expect(env.records).toHaveLength(1);
      }
      expect((await s.working.sweep()) >= 0).toBe(true);
    });

    it('refuses a client with an ioredis keyPrefix, and url together with client', () => {
      const prefixed = new Redis(redisUrl, { keyPrefix: 'app:', lazyConnect: true });
      expect(() => new RedisConnection({ client: prefixed })).toThrow(/keyPrefix/);
      expect(() => new RedisConnection({ client: prefixed, url: redisUrl })).toThrow(/exactly one/);
      prefixed.disconnect();
    });
  });

  describe('connection', () => {
    it('setup() reports the server version; nothing needs creating', async () => {
      const s = open();
      expect((await s.setup()).serverVersion).toMatch(/^\d+\.\d+/);
      expect(await keysUnder(s.connection.prefix)).toEqual([]);
    });

    it('close() leaves a client it was given open, and quits one it opened', async () => {
      const client = new Redis(redisUrl);
      const prefix = freshPrefix();
      const given = createRedisStores({ client, prefix });
      await given.facts.create({ userId: 'u' }, { content: 'x' });
      await given.close();
      expect(await client.ping()).toBe('PONG');
      await client.quit();

      const own = createRedisStores({ url: redisUrl, prefix });
      expect(await own.facts.list({ userId: 'u' })).toHaveLength(1);
      await own.close();
      await own.close(); // idempotent
      await expectKiokuError(own.facts.list({ userId: 'u' }), 'STORAGE');
      await deletePrefix(prefix);
    });

    it('an unreachable server is a StorageError, quickly, not a hang', async () => {
      const stores = createRedisStores({ url: 'redis://kioku:s3cret@127.0.0.1:1/2', prefix: freshPrefix() });
      let reconnects = 0;
      stores.connection.client.on('reconnecting', () => reconnects++);
      const error = await expectKiokuError(stores.facts.create({ userId: 'u' }, { content: 'x' }), 'STORAGE');
      expect(error.cause).toBeDefined();
      // Names the server (never its password) and what to check, not ioredis's retry counter.
      expect(error.message).toMatch(
        /^cannot reach redis:\/\/kioku:\*\*\*@127\.0\.0\.1:1\/2 .*redis-server running/,
      );
      expect(error.message).not.toMatch(/s3cret|max retries/i);
      // Quickly: at the first refused connection, counted in reconnection attempts rather than milliseconds
      // (a busy machine stretches those); ioredis's default would wait for 20 attempts.
      expect(reconnects).toBeLessThanOrEqual(1);
      await stores.close();
    });
  });

  describe('search cache', () => {
    it('a search through another client sees every create, update, delete and restore at once', async () => {
      const a = open();
      const b = twinOf(a.connection.prefix);
      const scope = randomScope();
      await a.facts.create(scope, { id: 'tea', content: 'Alice drinks green tea every morning' });
      expect((await b.facts.search(scope, { query: 'green tea' }))[0]?.fact.id).toBe('tea');
      await a.facts.create(scope, { id: 'bike', content: 'Alice rides a red bicycle to work' });
      expect((await b.facts.search(scope, { query: 'bicycle' }))[0]?.fact.id).toBe('bike');
      await a.facts.update(scope, 'tea', { content: 'Alice switched to black coffee' });
      expect((await b.facts.search(scope, { query: 'coffee' }))[0]?.fact.id).toBe('tea');
      expect((await b.facts.search(scope, { query: 'green tea' })).map((h) => h.fact.id)).not.toContain(
        'tea',
      );
      const snapshot = await a.facts.snapshot({ userId: scope.userId });
      await a.facts.delete(scope, 'bike');
      expect((await b.facts.search(scope, { query: 'bicycle' })).map((h) => h.fact.id)).toEqual([]);
      expect(await b.facts.categories(scope)).toEqual([{ category: 'general', count: 1 }]);
      await a.facts.restore(snapshot);
      expect((await b.facts.search(scope, { query: 'bicycle' }))[0]?.fact.id).toBe('bike');
      expect(await b.facts.list(scope)).toHaveLength(2);
    });

    it('stays right across log compaction (many deletes) and with the cache turned off', async () => {
      const prefix = freshPrefix();
      const a = open({ prefix, cache: { maxDelta: 5 } });
      const off = twinOf(prefix, { cache: { partitions: 0 } });
      const scope = randomScope();
      await a.facts.search(scope, { query: 'warm the cache' });
      for (let round = 0; round < 3; round++) {
        const ids = await times(40, (i) =>
          a.facts.create(scope, { content: `round ${round} item ${i} zebra` }),
        );
        await a.facts.search(scope, { query: 'zebra' });
        for (const fact of ids.slice(0, 39)) await a.facts.delete(scope, fact.id);
      }
      const expected = (await off.facts.list(scope)).map((f) => f.id);
      expect(expected).toHaveLength(3);
      expect((await a.facts.list(scope)).map((f) => f.id)).toEqual(expected);
      const hits = await a.facts.search(scope, { query: 'zebra', limit: 100 });
      expect(hits.map((h) => h.fact.id).sort()).toEqual([...expected].sort());
    });

    it('documents and details: search follows writes from another client', async () => {
      const a = open();
      const b = twinOf(a.connection.prefix);
      const scope = randomScope();
      await b.documents.search(scope, { query: 'anything' });
      await a.documents.create(scope, {
        id: 'guide',
        title: 'Espresso guide',
        text: 'Grind fine and tamp firmly.',
      });
      expect((await b.documents.search(scope, { query: 'tamp espresso' }))[0]?.documentId).toBe('guide');
      await a.documents.delete(scope, 'guide');
      expect(await b.documents.search(scope, { query: 'tamp espresso' })).toEqual([]);
      await b.details.search(scope, { query: 'anything' });
      const d = await a.details.create(scope, { description: 'npm log', content: 'ERESOLVE peer conflict' });
      expect((await b.details.search(scope, { query: 'peer conflict' }))[0]?.detail.id).toBe(d.id);
      await a.details.deactivate(scope, d.id);
      expect(await b.details.search(scope, { query: 'peer conflict' })).toEqual([]);
    });
  });

  describe('fact revision', () => {
    it('it never reads as a value it had, even after eraseUser; a refused write leaves it', async () => {
      const a = open();
      const b = twinOf(a.connection.prefix);
      const scope = randomScope();
      const seen = new Set<string>();
      const expectNew = async () => {
        const revision = await b.facts.revision(scope);
        expect(seen.has(revision), `revision ${revision} came back`).toBe(false);
        seen.add(revision);
      };
      await a.facts.create(scope, { id: 'tea', content: 'Alice drinks tea' });
      await expectNew();
      const snapshot = await a.facts.snapshot({ userId: scope.userId });
      await a.facts.eraseUser(scope.userId);
      // An erased partition reads as a new value every time (none it ever had).
      await expectNew();
      await expectNew();
      // The same write again after the erase: the counter starts over, the revision does not.
      await a.facts.create(scope, { id: 'tea', content: 'Alice drinks tea' });
      await expectNew();
      await a.facts.restore(snapshot);
      await expectNew();
      await expect(a.facts.update(scope, 'tea', { content: 'x' }, { expectedVersion: 9 })).rejects.toThrow();
      await expect(a.facts.create(scope, { id: 'tea', content: 'again' })).rejects.toThrow();
      expect(await a.facts.delete(scope, 'no-such-fact')).toBe(false);
      expect(await b.facts.revision(scope)).toBe([...seen].at(-1));
      const many = await times(40, (i) => a.facts.create(scope, { content: `item ${i}` }));
      for (const fact of many) {
        await a.facts.delete(scope, fact.id);
        await expectNew();
      }
      await a.facts.eraseUser(scope.userId);
      expect(await keysUnder(a.connection.prefix)).toEqual([]);
    });
  });

  describe('working memory expiry in Redis', () => {
    it('Redis deletes an entry on its own when its TTL is up (real time, no read needed)', async () => {
      const s = open();
      const working = new RedisWorkingMemoryStore({ connection: s.connection, clock: systemClock });
      const scope = randomScope();
      await working.set(scope, 'session/s1/short', 'gone soon', { ttlMs: 200 });
      await working.set(scope, 'session/s1/long', 'stays', { ttlMs: 60_000 });
      const entryKey = `${s.connection.prefix}working:{${scope.userId}}:-:e:session%2Fs1%2Fshort`;
      // The key name is right (its long-lived sibling is there), and the short entry carries Redis's own TTL:
      // at most 200 ms left, or already gone (-2) when a busy machine took longer than that to ask.
      expect(await raw().exists(entryKey.replace(/short$/, 'long'))).toBe(1);
      const pttl = await raw().pttl(entryKey);
      if (pttl !== -2) expect(pttl).toBeGreaterThan(0);
      expect(pttl).toBeLessThanOrEqual(200);
      await new Promise((resolve) => setTimeout(resolve, 350));
      expect(await raw().exists(entryKey)).toBe(0);
      expect(await working.get(scope, 'session/s1/short')).toBeNull();
      expect((await working.list(scope)).map((e) => e.key)).toEqual(['session/s1/long']);
      // The index keys live as long as their longest-lived entry.
      const exp = `${s.connection.prefix}working:{${scope.userId}}:-:exp`;
      expect(await raw().pttl(exp)).toBeGreaterThan(50_000);
    });

    it('index keys expire with their last entry: nothing is left once every entry has expired', async () => {
      const prefix = freshPrefix();
      const working = new RedisWorkingMemoryStore({ client: sharedClient(), prefix, clock: systemClock });
      const scope = randomScope({ agent: true });
      // Another user's entry that outlives the test shows the listing sees this prefix's keys (checking
      // for the short ones before they expire would race a busy machine's clock).
      const other = randomScope({ agent: true });
      await working.set(other, 'patrol/p0/k0', 'v', { ttlMs: 60_000 });
      await times(5, (i) => working.set(scope, `patrol/p${i % 2}/k${i}`, 'v', { ttlMs: 150 }));
      await new Promise((resolve) => setTimeout(resolve, 400));
      const left = await keysUnder(prefix);
      expect(left.filter((key) => key.includes(`{${other.userId}}`)).length).toBeGreaterThan(0);
      expect(left.filter((key) => key.includes(`{${scope.userId}}`))).toEqual([]);
      await deletePrefix(prefix);
    });

    it('an overwrite with a shorter TTL never shortens the index keys below a live entry', async () => {
      const prefix = freshPrefix();
      const working = new RedisWorkingMemoryStore({ client: sharedClient(), prefix, clock: systemClock });
      const scope = randomScope();
      await working.set(scope, 'session/s1/long', 'long', { ttlMs: 60_000 });
      await working.set(scope, 'session/s1/short', 'short', { ttlMs: 100 });
      await new Promise((resolve) => setTimeout(resolve, 250));
      expect((await working.get(scope, 'session/s1/long'))?.value).toBe('long');
      expect((await working.list(scope, 'session/s1')).map((e) => e.key)).toEqual(['session/s1/long']);
      await deletePrefix(prefix);
    });

    it('with a manual clock, sweep() counts exactly what it removed and the cap ignores expired entries', async () => {
      const prefix = freshPrefix();
      const clock = new ManualClock();
      const working = new RedisWorkingMemoryStore({
        client: sharedClient(),
        prefix,
        clock,
        maxEntriesPerNamespace: 3,
      });
      const scope = randomScope();
      for (let i = 0; i < 3; i++) await working.set(scope, `session/s1/old${i}`, 'old', { ttlMs: 1000 });
      clock.advance(2000);
      await working.set(scope, 'session/s1/new', 'new');
      // The write removed the namespace's expired entries: their keys are gone from Redis.
      const keys = (await keysUnder(prefix)).filter((k) => k.includes(':e:'));
      expect(keys).toHaveLength(1);
      expect(await working.sweep()).toBe(0);
      await deletePrefix(prefix);
    });
  });

  describe('concurrency across clients', () => {
    it('caps hold with two clients writing one session and one namespace at once', async () => {
      const a = open();
      const b = twinOf(a.connection.prefix);
      const scope = randomScope();
      const session = await a.sessions.create(scope);
      const both = [a, b];
      await times(260, (i) => both[i % 2]!.sessions.kvSet(scope, session.id, `k${i}`, `v${i}`));
      await times(300, (i) =>
        both[i % 2]!.sessions.transcriptAppend(scope, session.id, [
          { role: 'user', content: `q${i}` },
          { role: 'assistant', content: `a${i}` },
        ]),
      );
      await times(80, (i) => both[i % 2]!.working.set(scope, `session/shared/k${i}`, `v${i}`));
      const prefix = a.connection.prefix;
      const base = `${prefix}sessions:{${scope.userId}}:-:s:${session.id}`;
      expect(await raw().hlen(`${base}:kv`)).toBe(200);
      expect(await raw().zcard(`${base}:kvo`)).toBe(200);
      expect(await raw().llen(`${base}:tr`)).toBe(500);
      const transcript = await b.sessions.transcriptReadLast(scope, session.id, 500);
      for (let i = 0; i < transcript.length; i += 2) {
        // Batches are never split: every question is followed by its own answer.
        expect(transcript[i]!.content.slice(1)).toBe(transcript[i + 1]!.content.slice(1));
      }
      expect(await raw().zcard(`${prefix}working:{${scope.userId}}:-:ns:session%2Fshared`)).toBe(50);
      expect(await a.working.list(scope, 'session/shared')).toHaveLength(50);
    });

    it('read-modify-writes from two clients lose no update (plan notes, fact updates)', async () => {
      const a = open();
      const b = twinOf(a.connection.prefix);
      const scope = { ...randomScope(), threadId: randomId('thread') };
      await a.plans.create(scope, { goal: 'Collect notes' });
      await times(60, (i) => [a, b][i % 2]!.plans.addContextNote(scope, `note ${i}`));
      const plan = await b.plans.get(scope);
      expect(new Set(plan!.contextNotes.map((n) => n.text)).size).toBe(60);
      await times(40, (i) => [a, b][i % 2]!.plans.addStep(scope, { description: `step ${i}` }));
      const steps = (await a.plans.get(scope))!.steps;
      expect(steps).toHaveLength(40);
      expect(new Set(steps.map((s) => s.id)).size).toBe(40);

      // Concurrent updates of different fields of one fact, from two clients: each keeps the others'.
      const facts = await times(20, (i) => a.facts.create(scope, { content: `fact ${i}` }));
      await times(20, async (i) => {
        const id = facts[i]!.id;
        await Promise.all([
          a.facts.update(scope, id, { title: `title ${i}` }),
          b.facts.update(scope, id, { tags: [`tag${i}`] }),
          a.facts.update(scope, id, { category: 'work/notes' }),
          b.facts.update(scope, id, { metadata: { n: i } }),
        ]);
      });
      for (const [i, fact] of (await a.facts.list(scope)).entries()) {
        expect(fact).toMatchObject({
          title: `title ${i}`,
          tags: [`tag${i}`],
          category: 'work/notes',
          metadata: { n: i },
        });
      }
    });
  });

  describe('versions', () => {
    it('facts and plans stored before versions read as version 1, and go on from there', async () => {
      const prefix = freshPrefix();
      const s = open({ prefix });
      const scope = { userId: 'alice', agentId: 'bot' };
      const thread = { ...scope, threadId: 't1' };
      const fact = await s.facts.create(scope, { id: 'f1', content: 'Prefers tea' });
      const plan = await s.plans.create(thread, { goal: 'Ship it', steps: ['one'] });
      // Rewrite both as an older version of Kioku stored them: no `version`.
      const { version: _f, ...oldFact } = fact;
      const { version: _p, ...oldPlan } = plan;
      await raw().hset(`${prefix}facts:{alice}:bot:rec`, 'f1', JSON.stringify(oldFact));
      await raw().set(`${prefix}plans:{alice}:bot:t1`, JSON.stringify(oldPlan));

      const b = twinOf(prefix);
      expect(await s.facts.get(scope, 'f1')).toEqual(fact);
      expect((await b.facts.list(scope))[0]?.version).toBe(1);
      expect((await b.facts.search(scope, { query: 'tea' }))[0]?.fact.version).toBe(1);
      expect((await s.facts.snapshot({ userId: 'alice' })).records[0]?.version).toBe(1);
      await expectKiokuError(s.facts.update(scope, 'f1', { title: 'x' }, { expectedVersion: 2 }), 'CONFLICT');
      expect(await s.facts.update(scope, 'f1', { title: 'Tea' }, { expectedVersion: 1 })).toMatchObject({
        version: 2,
      });
      expect(JSON.parse((await raw().hget(`${prefix}facts:{alice}:bot:rec`, 'f1'))!).version).toBe(2);

      expect(await s.plans.get(thread)).toEqual(plan);
      expect((await s.plans.snapshot({ userId: 'alice' })).records[0]?.version).toBe(1);
      await expectKiokuError(s.plans.complete(thread, { expectedVersion: 2 }), 'CONFLICT');
      expect((await b.plans.complete(thread, { expectedVersion: 1 })).version).toBe(2);
      await expectKiokuError(s.plans.delete(thread, { expectedVersion: 1 }), 'CONFLICT');
      expect(await s.plans.delete(thread, { expectedVersion: 2 })).toBe(true);
    });

    it('working-memory entries stored before versions read as version 1, and go on from there', async () => {
      const prefix = freshPrefix();
      const s = open({ prefix });
      const scope = { userId: 'alice', agentId: 'bot' };
      const entry = await s.working.set(scope, 'session/s1/note', 'old note', { ttlMs: 600_000 });
      const entryKey = `${prefix}working:{alice}:bot:e:session%2Fs1%2Fnote`;
      const stored = JSON.parse((await raw().get(entryKey))!);
      expect(stored).toMatchObject({ ver: 1, entry: { value: 'old note' } });
      expect(stored.entry.version).toBeUndefined();
      // Rewrite it as an older version of Kioku stored it: no `ver`.
      await raw().set(entryKey, JSON.stringify({ seq: stored.seq, entry: stored.entry }), 'KEEPTTL');

      expect(await s.working.get(scope, 'session/s1/note')).toEqual(entry);
      expect((await s.working.list(scope))[0]?.version).toBe(1);
      expect((await s.working.snapshot({ userId: 'alice' })).records[0]?.version).toBe(1);
      await expectKiokuError(
        s.working.set(scope, 'session/s1/note', 'x', { expectedVersion: 0 }),
        'CONFLICT',
      );
      expect(
        (await twinOf(prefix).working.set(scope, 'session/s1/note', 'new', { expectedVersion: 1 })).version,
      ).toBe(2);
      expect(JSON.parse((await raw().get(entryKey))!).ver).toBe(2);
      await expectKiokuError(s.working.delete(scope, 'session/s1/note', { expectedVersion: 1 }), 'CONFLICT');
      expect(await s.working.delete(scope, 'session/s1/note', { expectedVersion: 2 })).toBe(true);
    });

    it('session k-v entries stored before versions read as version 1, and go on from there', async () => {
      const prefix = freshPrefix();
      const s = open({ prefix });
      const scope = { userId: 'alice', agentId: 'bot' };
      const session = await s.sessions.create(scope);
      const entry = await s.sessions.kvSet(scope, session.id, 'city', 'Lisbon');
      const hashKey = `${prefix}sessions:{alice}:bot:s:${session.id}:kv`;
      const stored = (await raw().hget(hashKey, 'city'))!;
      expect(stored.endsWith(',"version":1}')).toBe(true);
      // Rewrite it as an older version of Kioku stored it: no version.
      const { version: _version, ...old } = JSON.parse(stored);
      await raw().hset(hashKey, 'city', JSON.stringify(old));

      expect(await s.sessions.kvGet(scope, session.id, 'city')).toEqual(entry);
      expect((await s.sessions.kvList(scope, session.id))[0]?.version).toBe(1);
      expect((await s.sessions.snapshot({ userId: 'alice' })).records[0]?.kv[0]?.version).toBe(1);
      await expectKiokuError(
        s.sessions.kvSet(scope, session.id, 'city', 'x', { expectedVersion: 0 }),
        'CONFLICT',
      );
      const next = await twinOf(prefix).sessions.kvSet(scope, session.id, 'city', 'Porto', {
        expectedVersion: 1,
      });
      expect(next.version).toBe(2);
      expect(JSON.parse((await raw().hget(hashKey, 'city'))!)).toEqual(next);
      await expectKiokuError(
        s.sessions.kvDelete(scope, session.id, 'city', { expectedVersion: 1 }),
        'CONFLICT',
      );
      expect(await s.sessions.kvDelete(scope, session.id, 'city', { expectedVersion: 2 })).toBe(true);
    });

    it('snapshot and restore carry versions', async () => {
      const a = open();
      const scope = randomScope();
      const thread = { ...scope, threadId: randomId('thread') };
      const fact = await a.facts.create(scope, { content: 'v1' });
      await a.facts.update(scope, fact.id, { content: 'v2' });
      await a.facts.update(scope, fact.id, { content: 'v3' });
      await a.plans.create(thread, { goal: 'g', steps: ['a'] });
      await a.plans.addContextNote(thread, 'n');
      const facts = await a.facts.snapshot({ userId: scope.userId });
      const plans = await a.plans.snapshot({ userId: scope.userId });
      expect(facts.records[0]?.version).toBe(3);
      expect(plans.records[0]?.version).toBe(2);
      const b = open();
      await b.facts.restore(facts);
      await b.plans.restore(plans);
      expect((await b.facts.get(scope, fact.id))?.version).toBe(3);
      expect((await b.plans.get(thread))?.version).toBe(2);
      await expectKiokuError(b.facts.delete(scope, fact.id, { expectedVersion: 2 }), 'CONFLICT');
      expect((await b.facts.update(scope, fact.id, { content: 'v4' }, { expectedVersion: 3 })).version).toBe(
        4,
      );
    });

    it('a delete with expectedVersion goes through the change log: other clients’ search caches see it', async () => {
      const prefix = freshPrefix();
      const a = open({ prefix });
      const b = twinOf(prefix);
      const scope = { userId: 'alice', agentId: 'bot' };
      const fact = await a.facts.create(scope, { id: 'tea', content: 'Alice drinks green tea' });
      await a.facts.create(scope, { id: 'bike', content: 'Alice rides a red bicycle', category: 'sport' });
      expect((await b.facts.search(scope, { query: 'green tea' }))[0]?.fact.id).toBe('tea');
      const meta = `${prefix}facts:{alice}:bot:meta`;
      const before = await raw().hget(meta, 'ver');
      await expectKiokuError(a.facts.delete(scope, 'tea', { expectedVersion: 2 }), 'CONFLICT');
      expect(await raw().hget(meta, 'ver')).toBe(before); // refused: nothing written, not even the log
      expect(await a.facts.delete(scope, 'tea', { expectedVersion: fact.version })).toBe(true);
      expect(Number(await raw().hget(meta, 'ver'))).toBe(Number(before) + 1);
      expect(await raw().zscore(`${prefix}facts:{alice}:bot:ord`, 'tea')).toBeNull();
      expect(await b.facts.search(scope, { query: 'green tea' })).toEqual([]);
      expect(await b.facts.categories(scope)).toEqual([{ category: 'sport', count: 1 }]);
      expect((await b.facts.list(scope)).map((f) => f.id)).toEqual(['bike']);
    });

    it('an update and an expected-version delete racing from two clients: exactly one wins', async () => {
      const a = open();
      const b = twinOf(a.connection.prefix);
      const scope = { ...randomScope(), threadId: randomId('thread') };
      const facts = await times(30, (i) => a.facts.create(scope, { content: `fact ${i}` }));
      const outcomes = await times(30, (i) =>
        Promise.allSettled([
          b.facts.delete(scope, facts[i]!.id, { expectedVersion: 1 }),
          a.facts.update(scope, facts[i]!.id, { content: `changed ${i}` }),
        ]),
      );
      for (const [i, [deleted, updated]] of outcomes.entries()) {
        const stored = await a.facts.get(scope, facts[i]!.id);
        if (deleted.status === 'fulfilled') {
          // The delete came first: the update found nothing.
          expect(deleted.value).toBe(true);
          expect(updated).toMatchObject({ status: 'rejected', reason: { code: 'NOT_FOUND' } });
          expect(stored).toBeNull();
        } else {
          // The update came first (also between the delete's read and its script): the delete refused.
          expect(deleted.reason).toMatchObject({ code: 'CONFLICT' });
          expect(updated.status).toBe('fulfilled');
          expect(stored).toMatchObject({ content: `changed ${i}`, version: 2 });
        }
      }
      // Plans alike: a note and a clear at version 1.
      for (let round = 0; round < 10; round++) {
        const thread = { ...scope, threadId: randomId('thread') };
        await a.plans.create(thread, { goal: 'g' });
        const [cleared, noted] = await Promise.allSettled([
          b.plans.delete(thread, { expectedVersion: 1 }),
          a.plans.addContextNote(thread, 'note'),
        ]);
        const stored = await a.plans.get(thread);
        if (cleared.status === 'fulfilled') {
          expect(noted).toMatchObject({ status: 'rejected', reason: { code: 'NOT_FOUND' } });
          expect(stored).toBeNull();
        } else {
          expect(cleared.reason).toMatchObject({ code: 'CONFLICT' });
          expect(stored?.version).toBe(2);
        }
      }
    });
  });

  describe('large values and odd text', () => {
    it('round-trips 1 MB values and Lua/JSON metacharacters through every kind', async () => {
      const s = open();
      const scope = randomScope({ agent: true });
      // Ordinary words: the BPE tokenizer (details count tokens) is slow on one unbroken run of a letter.
      const big = `${'lorem ipsum dolor sit amet. '.repeat(37_500)}end`;
      const odd = `quote " backslash \\ nul-free %2F ]] [[ --[[ lua ]] {"seq":1} \u2028 😀`;
      const fact = await s.facts.create(scope, { content: big });
      expect((await s.facts.get(scope, fact.id))?.content).toBe(big);
      await s.facts.update(scope, fact.id, { content: odd });
      expect((await s.facts.get(scope, fact.id))?.content).toBe(odd);
      await s.working.set(scope, 'session/s1/big', big);
      expect((await s.working.get(scope, 'session/s1/big'))?.value).toBe(big);
      await s.working.set(scope, 'session/s1/odd', odd);
      expect((await s.working.get(scope, 'session/s1/odd'))?.value).toBe(odd);
      const session = await s.sessions.create(scope);
      await s.sessions.kvSet(scope, session.id, odd, big);
      expect((await s.sessions.kvGet(scope, session.id, odd))?.value).toBe(big);
      await s.sessions.transcriptAppend(scope, session.id, { role: 'tool', content: odd, toolCallId: 'c1' });
      expect((await s.sessions.transcriptReadLast(scope, session.id, 1))[0]?.content).toBe(odd);
      const detail = await s.details.create(scope, { description: 'big', content: big });
      expect((await s.details.get(scope, detail.id))?.content).toBe(big);
      const plan = { ...scope, threadId: 't' };
      await s.plans.create(plan, { goal: odd });
      expect((await s.plans.get(plan))?.goal).toBe(odd.trim());
    });
  });
});
