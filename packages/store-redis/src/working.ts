import {
  isWorkingEntryLive,
  keyHasPrefix,
  keyRootOf,
  LexicalIndex,
  type LexicalIndexOptions,
  namespaceFullError,
  namespaceOf,
  newWorkingEntry,
  parseOrThrow,
  parseScope,
  type RestoreOptions,
  type RestoreReport,
  type Scope,
  type SnapshotEnvelope,
  type SnapshotSelector,
  type WorkingEntry,
  type WorkingEntryInfo,
  WorkingEntrySchema,
  type WorkingHit,
  WorkingKeySchema,
  type WorkingLimits,
  type WorkingMemoryOptions,
  type WorkingMemoryStore,
  WorkingPrefixSchema,
  type WorkingQuery,
  WorkingQuerySchema,
  type WorkingSetOptions,
  workingEntryInfo,
  workingLimits,
  workingQueryMatches,
  workingSearchText,
} from '@kioku/core';
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
 * as the entry just written (Redis deletes it once every entry in it has expired).
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
local function store(m, json, ttl, expiresMs)
  local seq = redis.call('HINCRBY', W .. ':meta', 'seq', 1)
  redis.call('SET', W .. ':e:' .. m, '{"seq":' .. seq .. ',"entry":' .. json .. '}', 'PX', ttl)
  redis.call('ZADD', nsKey(m), seq, m)
  redis.call('ZADD', W .. ':exp', expiresMs, m)
  touch(nsKey(m), ttl)
  touch(W .. ':exp', ttl)
  touch(W .. ':meta', ttl)
  return seq
end
`;

/**
 * Set one entry. ARGV: W, member, entry JSON, ttl ms, expires-at ms (store clock), now ms, cap, reject.
 * The namespace's other live entries are counted (expired ones, by the store's clock or by Redis, are
 * removed first); at the cap the oldest go, or nothing changes and -1 is returned. A write also removes
 * up to 100 expired entries elsewhere in the partition.
 */
const SET = lua(`${HELPERS}
local member, now, cap = ARGV[2], tonumber(ARGV[6]), tonumber(ARGV[7])
local live, dead = {}, {}
for _, m in ipairs(redis.call('ZRANGE', nsKey(member), 0, -1)) do
  if m ~= member then
    local x = redis.call('ZSCORE', W .. ':exp', m)
    if x and tonumber(x) > now and redis.call('EXISTS', W .. ':e:' .. m) == 1 then live[#live + 1] = m
    else dead[#dead + 1] = m end
  end
end
if ARGV[8] == '1' and #live >= cap then return -1 end
for _, m in ipairs(dead) do drop(m) end
for _, m in ipairs(redis.call('ZRANGEBYSCORE', W .. ':exp', '-inf', now, 'LIMIT', 0, 100)) do drop(m) end
for i = 1, #live - cap + 1 do drop(live[i]) end
return store(member, ARGV[3], ARGV[4], ARGV[5])
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

/** Delete one entry; 1 when it was live. ARGV: W, member, now. */
const DELETE = lua(`${HELPERS}
local x = redis.call('ZSCORE', W .. ':exp', ARGV[2])
local existed = drop(ARGV[2])
if existed == 1 and x and tonumber(x) > tonumber(ARGV[3]) then return 1 end
return 0
`);

/** Delete the partition's expired entries; returns how many still existed. ARGV: W, now. */
const SWEEP = lua(`${HELPERS}
local n = 0
for _, m in ipairs(redis.call('ZRANGEBYSCORE', W .. ':exp', '-inf', ARGV[2])) do n = n + drop(m) end
return n
`);

/** Replace every entry under one key root. ARGV: W, encoded root, then per entry: member, JSON, ttl, expires-at. */
const RESTORE_ROOT = lua(`${HELPERS}
local root = ARGV[2] .. SLASH
for _, m in ipairs(redis.call('ZRANGE', W .. ':exp', 0, -1)) do
  if string.sub(m, 1, #root) == root then drop(m) end
end
for i = 3, #ARGV, 4 do store(ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]) end
return 1
`);

interface StoredEntry {
  seq: number;
  entry: WorkingEntry;
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
 * - `…:e:<key>`        STRING `{"seq":n,"entry":{…}}` with PX
 * - `…:ns:<namespace>` ZSET key → sequence: the namespace's entries, oldest first (the cap's order)
 * - `…:exp`            ZSET key → expiry (store clock, ms): liveness, sweeping and listing
 * - `…:meta`           HASH `seq`
 *
 * Scripts declare the partition's `…:exp` key and reach the others by name; all of a user's keys share
 * one hash tag (`{user}`), so they live on one node. The index keys get a TTL as long as their longest-lived entry. `set` is one Lua script: counting the
 * namespace, evicting the oldest and writing happen at once, so concurrent writers (any number of
 * clients or processes) never push a namespace past its cap.
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
    const entry = newWorkingEntry(s, key, value, options, now, this.#limits.defaultTtlMs);
    const ttl = Date.parse(entry.expiresAt) - Date.parse(entry.storedAt);
    const result = await this.connection.eval<number>(
      SET,
      [`${this.#base(s)}:exp`],
      [
        this.#base(s),
        encodePart(key),
        JSON.stringify(entry),
        ttl,
        now + ttl,
        now,
        this.#limits.cap,
        this.#limits.onCapacity === 'reject' ? 1 : 0,
      ],
    );
    if (result === -1) throw namespaceFullError(namespaceOf(key), this.#limits.cap);
    return entry;
  }

  async get(scope: Scope, key: string): Promise<WorkingEntry | null> {
    const s = parseScope(scope);
    parseOrThrow(WorkingKeySchema, key, 'working-memory key');
    const redisKey = `${this.#base(s)}:e:${encodePart(key)}`;
    const json = await this.connection.run('GET', () => this.connection.client.get(redisKey));
    if (json === null) return null;
    const { entry } = parseJson<StoredEntry>(json, 'working-memory entry');
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

  async delete(scope: Scope, key: string): Promise<boolean> {
    const s = parseScope(scope);
    parseOrThrow(WorkingKeySchema, key, 'working-memory key');
    const deleted = await this.connection.eval<number>(
      DELETE,
      [`${this.#base(s)}:exp`],
      [this.#base(s), encodePart(key), this.clock.now()],
    );
    return deleted === 1;
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
          args.push(encodePart(entry.key), JSON.stringify(entry), expiresMs - now, expiresMs);
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
      .map((json) => parseJson<StoredEntry>(json, 'working-memory entry'))
      .filter(({ entry }) => isWorkingEntryLive(entry, now) && (!prefix || keyHasPrefix(entry.key, prefix)));
  }
}
