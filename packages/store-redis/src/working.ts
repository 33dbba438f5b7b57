import type { Scope, WorkingEntry } from '@kioku/core';
import {
  checkWorkingVersion,
  isWorkingEntryLive,
  keyHasPrefix,
  keyRootOf,
  LexicalIndex,
  type LexicalIndexOptions,
  namespaceFullError,
  namespaceOf,
  newWorkingSet,
  parseOrThrow,
  parseScope,
  parseWriteOptions,
  type WorkingLimits,
  type WorkingMemoryOptions,
  workingEntryInfo,
  workingLimits,
  workingQueryMatches,
  workingSearchText,
} from '@kioku/core/adapter';
import {
  type RestoreOptions,
  type RestoreReport,
  type SnapshotEnvelope,
  type SnapshotSelector,
  type WorkingEntryInfo,
  WorkingEntrySchema,
  type WorkingHit,
  WorkingKeySchema,
  type WorkingMemoryStore,
  WorkingPrefixSchema,
  type WorkingQuery,
  WorkingQuerySchema,
  type WorkingSetOptions,
  type WriteOptions,
} from '@kioku/core/store';
import { RedisStoreBase, type RedisStoreOptions } from './base.js';
import { lua } from './connection.js';
import { ENCODED_SLASH, encodePart, NO_AGENT } from './keys.js';
import { parseJson } from './records.js';

export type RedisWorkingMemoryOptions = RedisStoreOptions &
  WorkingMemoryOptions & {
    /** Ranking parameters for core's LexicalIndex (default: core's). */
    search?: LexicalIndexOptions;
  };

/**
 * Lua helpers shared by the working-memory scripts. `W` is the partition base (`…working:{user}:agent`);
 * members are encoded keys, in which `/` is `%2F`, so a member's namespace is what precedes its second
 * `%2F`. `drop` removes an entry and its index entries; `touch` makes an index key live at least as long
 * as the entry just written (Redis deletes it once every entry in it has expired). `liveVersion` is the
 * version of a member's live entry (by the store's clock, and still present in Redis), 0 when it has none;
 * entries stored before versions existed have no `ver` and are at version 1.
 */
const HELPERS = `
local W = ARGV[1]
local SLASH = '${ENCODED_SLASH}'
local function nsKey(m)
  local a = string.find(m, SLASH, 1, true)
  local b = string.find(m, SLASH, a + #SLASH, true)
  return W .. ':ns:' .. string.sub(m, 1, b - 1)
end
local function drop(m)
  local existed = redis.call('DEL', W .. ':e:' .. m)
  redis.call('ZREM', W .. ':exp', m)
  redis.call('ZREM', nsKey(m), m)
  return existed
end
local function touch(key, ttl)
  if redis.call('PTTL', key) == -1 then redis.call('PEXPIRE', key, ttl)
  else redis.call('PEXPIRE', key, ttl, 'GT') end
end
local function liveVersion(m, now)
  local x = redis.call('ZSCORE', W .. ':exp', m)
  if not x or tonumber(x) <= now then return 0 end
  local stored = redis.call('GET', W .. ':e:' .. m)
  if not stored then return 0 end
  return tonumber(string.match(stored, '^{"seq":%d+,"ver":(%d+),') or '1')
end
local function store(m, json, ttl, expiresMs, ver)
  local seq = redis.call('HINCRBY', W .. ':meta', 'seq', 1)
  redis.call('SET', W .. ':e:' .. m, '{"seq":' .. seq .. ',"ver":' .. ver .. ',"entry":' .. json .. '}', 'PX', ttl)
  redis.call('ZADD', nsKey(m), seq, m)
  redis.call('ZADD', W .. ':exp', expiresMs, m)
  touch(nsKey(m), ttl)
  touch(W .. ':exp', ttl)
  touch(W .. ':meta', ttl)
  return seq
end
`;

/**
 * Set one entry. ARGV: W, member, entry JSON (without its version), ttl ms, expires-at ms (store clock),
 * now ms, cap, reject, expected version ('' for none). Core's rule: the entry's version is one more than
 * the live entry's (1 when there is none), and a given expected version must equal the live one (0: none),
 * else nothing changes and {-2, live version} is returned. The namespace's other live entries are counted
 * (expired ones, by the store's clock or by Redis, are removed first); at the cap the oldest go, or nothing
 * changes and {-1, 0} is returned. A write also removes up to 100 expired entries elsewhere in the
 * partition. Returns {1, version} when written.
 */
const SET = lua(`${HELPERS}
local member, now, cap = ARGV[2], tonumber(ARGV[6]), tonumber(ARGV[7])
local current = liveVersion(member, now)
if ARGV[9] ~= '' and tonumber(ARGV[9]) ~= current then return {-2, current} end
local live, dead = {}, {}
for _, m in ipairs(redis.call('ZRANGE', nsKey(member), 0, -1)) do
  if m ~= member then
    local x = redis.call('ZSCORE', W .. ':exp', m)
    if x and tonumber(x) > now and redis.call('EXISTS', W .. ':e:' .. m) == 1 then live[#live + 1] = m
    else dead[#dead + 1] = m end
  end
end
if ARGV[8] == '1' and #live >= cap then return {-1, 0} end
for _, m in ipairs(dead) do drop(m) end
for _, m in ipairs(redis.call('ZRANGEBYSCORE', W .. ':exp', '-inf', now, 'LIMIT', 0, 100)) do drop(m) end
for i = 1, #live - cap + 1 do drop(live[i]) end
store(member, ARGV[3], ARGV[4], ARGV[5], current + 1)
return {1, current + 1}
`);

/** Live entries (by the store's clock, and still present in Redis) under an encoded prefix ('' = all). ARGV: W, now, prefix. */
const LIVE = lua(`${HELPERS}
local p = ARGV[3]
local out = {}
for _, m in ipairs(redis.call('ZRANGEBYSCORE', W .. ':exp', '(' .. ARGV[2], '+inf')) do
  if p == '' or m == p or string.sub(m, 1, #p + #SLASH) == p .. SLASH then
    local v = redis.call('GET', W .. ':e:' .. m)
    if v then out[#out + 1] = v end
  end
end
return out
`);

/**
 * Delete one entry. ARGV: W, member, now, expected version ('' for none). Returns {1, version} when it was
 * live, {0, 0} when it was not (an expired entry is deleted too), and {-2, live version} without deleting
 * anything when an expected version is given and differs (0: no live entry).
 */
const DELETE = lua(`${HELPERS}
local live = liveVersion(ARGV[2], tonumber(ARGV[3]))
if ARGV[4] ~= '' and tonumber(ARGV[4]) ~= live then return {-2, live} end
drop(ARGV[2])
if live > 0 then return {1, live} end
return {0, 0}
`);

/** Delete the partition's expired entries; returns how many still existed. ARGV: W, now. */
const SWEEP = lua(`${HELPERS}
local n = 0
for _, m in ipairs(redis.call('ZRANGEBYSCORE', W .. ':exp', '-inf', ARGV[2])) do n = n + drop(m) end
return n
`);

/**
 * Replace every entry under one key root. ARGV: W, encoded root, then per entry: member, JSON (without its
 * version), ttl, expires-at, version.
 */
const RESTORE_ROOT = lua(`${HELPERS}
local root = ARGV[2] .. SLASH
for _, m in ipairs(redis.call('ZRANGE', W .. ':exp', 0, -1)) do
  if string.sub(m, 1, #root) == root then drop(m) end
end
for i = 3, #ARGV, 5 do store(ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]) end
return 1
`);

interface StoredEntry {
  seq: number;
  entry: WorkingEntry;
}

/** An entry's stored JSON: `{"seq":n,"ver":v,"entry":{…}}`, the version (absent before versions: 1) beside the entry. */
function parseStored(json: string): StoredEntry {
  const stored = parseJson<{ seq: number; ver?: number; entry: Omit<WorkingEntry, 'version'> }>(
    json,
    'working-memory entry',
  );
  return { seq: stored.seq, entry: { ...stored.entry, version: stored.ver ?? 1 } };
}

/** The JSON an entry is stored as: without its version, which the scripts keep beside it. */
function entryJson(entry: WorkingEntry): string {
  const { version: _version, ...rest } = entry;
  return JSON.stringify(rest);
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const oldestFirst = (a: StoredEntry, b: StoredEntry) =>
  compare(a.entry.storedAt, b.entry.storedAt) || a.seq - b.seq;

/**
 * Working memory with Redis's own expiry: every entry is a string key set with `PX <ttl>`, so Redis
 * deletes it when its time is up, whether or not Kioku ever looks at it again. Visibility is decided by
 * the store's clock (an entry is returned while `expiresAt` is after `clock.now()`), so tests can move
 * time; with the system clock both agree. Per partition (user + agent):
 *
 * - `…:e:<key>`        STRING `{"seq":n,"ver":v,"entry":{…}}` with PX (`ver`: the entry's version)
 * - `…:ns:<namespace>` ZSET key → sequence: the namespace's entries, oldest first (the cap's order)
 * - `…:exp`            ZSET key → expiry (store clock, ms): liveness, sweeping and listing
 * - `…:meta`           HASH `seq`
 *
 * Scripts declare the partition's `…:exp` key and reach the others by name; all of a user's keys share
 * one hash tag (`{user}`), so they live on one node. The index keys get a TTL as long as their longest-lived entry. `set` is one Lua script: counting the
 * namespace, evicting the oldest and writing happen at once, so concurrent writers (any number of
 * clients or processes) never push a namespace past its cap, and its version check and write are one step.
 */
export class RedisWorkingMemoryStore extends RedisStoreBase implements WorkingMemoryStore {
  readonly #limits: WorkingLimits;
  readonly #search: LexicalIndexOptions | undefined;

  constructor(options: RedisWorkingMemoryOptions) {
    super(options);
    this.#limits = workingLimits(options);
    this.#search = options.search;
  }

  async set(
    scope: Scope,
    key: string,
    value: string,
    options: WorkingSetOptions = {},
  ): Promise<WorkingEntry> {
    const s = parseScope(scope);
    const now = this.clock.now();
    const set = newWorkingSet(s, key, value, options, now, this.#limits.defaultTtlMs);
    const { entry } = set;
    const ttl = Date.parse(entry.expiresAt) - Date.parse(entry.storedAt);
    const [outcome, version] = await this.connection.eval<[number, number]>(
      SET,
      [`${this.#base(s)}:exp`],
      [
        this.#base(s),
        encodePart(key),
        entryJson(entry),
        ttl,
        now + ttl,
        now,
        this.#limits.cap,
        this.#limits.onCapacity === 'reject' ? 1 : 0,
        set.expectedVersion ?? '',
      ],
    );
    if (outcome === -2) checkWorkingVersion(key, version, set.expectedVersion);
    if (outcome === -1) throw namespaceFullError(namespaceOf(key), this.#limits.cap);
    return { ...entry, version };
  }

  async get(scope: Scope, key: string): Promise<WorkingEntry | null> {
    const s = parseScope(scope);
    parseOrThrow(WorkingKeySchema, key, 'working-memory key');
    const redisKey = `${this.#base(s)}:e:${encodePart(key)}`;
    const json = await this.connection.run('GET', () => this.connection.client.get(redisKey));
    if (json === null) return null;
    const { entry } = parseStored(json);
    return isWorkingEntryLive(entry, this.clock.now()) ? entry : null;
  }

  async list(scope: Scope, prefix?: string): Promise<WorkingEntryInfo[]> {
    const s = parseScope(scope);
    if (prefix !== undefined) parseOrThrow(WorkingPrefixSchema, prefix, 'working-memory prefix');
    const live = await this.#live(this.#base(s), prefix);
    return live.sort(oldestFirst).map((stored) => workingEntryInfo(stored.entry));
  }

  async search(scope: Scope, query: WorkingQuery): Promise<WorkingHit[]> {
    const s = parseScope(scope);
    const q = parseOrThrow(WorkingQuerySchema, query, 'working-memory query');
    const live = await this.#live(this.#base(s), q.prefix);
    // Live and under the prefix already; the prefix is checked again, cheaply, with the rest of the query.
    const keep = (e: WorkingEntry) => workingQueryMatches(e, q);
    if (!q.query?.trim()) {
      return live
        .filter((stored) => keep(stored.entry))
        .sort((a, b) => oldestFirst(b, a))
        .slice(0, q.limit)
        .map(({ entry }) => ({ entry, score: 0 }));
    }
    const byKey = new Map(live.sort(oldestFirst).map(({ entry }) => [entry.key, entry]));
    const index = new LexicalIndex(this.#search);
    for (const entry of byKey.values()) index.set(entry.key, workingSearchText(entry));
    return index
      .search(q.query, { limit: q.limit, filter: (key) => keep(byKey.get(key)!) })
      .map((hit) => ({ entry: byKey.get(hit.id)!, score: hit.score }));
  }

  async delete(scope: Scope, key: string, options?: WriteOptions): Promise<boolean> {
    const s = parseScope(scope);
    parseOrThrow(WorkingKeySchema, key, 'working-memory key');
    const { expectedVersion } = parseWriteOptions(options);
    const [outcome, version] = await this.connection.eval<[number, number]>(
      DELETE,
      [`${this.#base(s)}:exp`],
      [this.#base(s), encodePart(key), this.clock.now(), expectedVersion ?? ''],
    );
    if (outcome === -2) checkWorkingVersion(key, version, expectedVersion);
    return outcome === 1;
  }

  /**
   * Delete the entries whose expiry (by the store's clock) has passed, in every partition under the
   * prefix; returns how many. Entries Redis already expired on its own are not counted again.
   */
  async sweep(): Promise<number> {
    const now = this.clock.now();
    let removed = 0;
    for (const found of await this.partitionsOf('working', ':exp', undefined)) {
      if (found.rest !== 'exp') continue;
      removed += await this.connection.eval<number>(SWEEP, [found.key], [this.#base(found), now]);
    }
    return removed;
  }

  eraseUser(userId: string): Promise<string[]> {
    return this.eraseKeys('working', userId, async () =>
      (await this.snapshot({ userId })).records.map((r) => r.key),
    );
  }

  async snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<WorkingEntry>> {
    return this.snapshotOf('working', selector, async (userId) => {
      const entries: WorkingEntry[] = [];
      for (const found of await this.partitionsOf('working', ':exp', userId)) {
        if (found.rest !== 'exp') continue;
        const live = await this.#live(this.#base(found), undefined);
        entries.push(...live.sort((a, b) => a.seq - b.seq).map((stored) => stored.entry));
      }
      return entries;
    });
  }

  /** Replaces, per user + agent, every key root (`session`, `patrol`, …) the snapshot has live entries in. */
  async restore(snapshot: unknown, options: RestoreOptions = {}): Promise<RestoreReport> {
    const now = this.clock.now();
    return this.restoreFrom('working', WorkingEntrySchema, snapshot, options, {
      userIdOf: (e) => e.userId,
      partitionOf: (e) => `${e.userId}/${e.agentId ?? NO_AGENT}/${keyRootOf(e.key)}`,
      idOf: (e) => e.key,
      keep: (e) => isWorkingEntryLive(e, now),
      replace: (multi, entries) => {
        const first = entries[0]!;
        const args: Array<string | number> = [this.#base(first), encodePart(keyRootOf(first.key))];
        for (const entry of entries) {
          const expiresMs = Date.parse(entry.expiresAt);
          args.push(encodePart(entry.key), entryJson(entry), expiresMs - now, expiresMs, entry.version);
        }
        multi.eval(RESTORE_ROOT.lua, 1, `${args[0]}:exp`, ...args);
      },
    });
  }

  #base(scope: Pick<Scope, 'userId' | 'agentId'>): string {
    return this.keys.base('working', scope);
  }

  /** Live entries under `prefix` (all when undefined), in no particular order. */
  async #live(base: string, prefix: string | undefined): Promise<StoredEntry[]> {
    const now = this.clock.now();
    const values = await this.connection.eval<string[]>(
      LIVE,
      [`${base}:exp`],
      [base, now, prefix === undefined ? '' : encodePart(prefix)],
    );
    return values
      .map(parseStored)
      .filter(({ entry }) => isWorkingEntryLive(entry, now) && (!prefix || keyHasPrefix(entry.key, prefix)));
  }
}
