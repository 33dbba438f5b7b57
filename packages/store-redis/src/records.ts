import { createHash } from 'node:crypto';
import { ConflictError, CorruptDataError, NotFoundError, StorageError } from '@kioku/core';
import { LexicalIndex, type LexicalIndexOptions, type LexicalIndexState } from '@kioku/core/adapter';
import { lua, type Multi, type RedisConnection, randomToken } from './connection.js';
import { decodeIndexState, encodeIndexState } from './index-state.js';

/**
 * A record partition (facts, documents or details of one user + agent) is four keys:
 *
 * - `…:rec`  HASH  id → record JSON
 * - `…:ord`  ZSET  id → insertion sequence (list order; an update keeps its place)
 * - `…:log`  ZSET  id → version of the id's last change (what a search cache has to fetch)
 * - `…:meta` HASH  `seq` (insertion counter), `ver` (change counter), `epoch` (changes on restore and
 *   when the log is compacted: caches of another epoch reload the whole partition)
 *
 * Every write is one Lua script, so the four keys never disagree. Kinds with `persistIndex` have a fifth,
 * written only by searches and never trusted beyond what the other four confirm:
 *
 * - `…:idx`  STRING `epoch \n version \n state`: the search index (LexicalIndex state, see index-state.ts)
 *   as it was at that change version, so a new process replays the changes since instead of re-analysing every text.
 */
export interface PartitionKeys {
  rec: string;
  ord: string;
  log: string;
  meta: string;
  idx: string;
}

export function partitionKeys(base: string): PartitionKeys {
  return {
    rec: `${base}:rec`,
    ord: `${base}:ord`,
    log: `${base}:log`,
    meta: `${base}:meta`,
    idx: `${base}:idx`,
  };
}

const keyList = (k: PartitionKeys) => [k.rec, k.ord, k.log, k.meta];

// The log keeps one entry per id ever changed; once it holds many more ids than the partition has records
// (deletions), it is dropped and the epoch changes, so caches reload instead of replaying it.
const COMPACT = `
local function compact(rec, log, meta, epoch)
  if redis.call('ZCARD', log) > 2 * redis.call('HLEN', rec) + 1000 then
    redis.call('DEL', log)
    redis.call('HSET', meta, 'epoch', epoch)
  end
end
`;

const INSERT = lua(`
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
redis.call('HSETNX', KEYS[4], 'epoch', ARGV[3])
local seq = redis.call('HINCRBY', KEYS[4], 'seq', 1)
local ver = redis.call('HINCRBY', KEYS[4], 'ver', 1)
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], seq, ARGV[1])
redis.call('ZADD', KEYS[3], ver, ARGV[1])
return 1
`);

// Compare-and-set on the SHA-1 of the stored JSON: 1 written, 0 gone, -1 changed since it was read.
const REPLACE = lua(`
local current = redis.call('HGET', KEYS[1], ARGV[1])
if not current then return 0 end
if redis.sha1hex(current) ~= ARGV[2] then return -1 end
redis.call('HSETNX', KEYS[4], 'epoch', ARGV[4])
local ver = redis.call('HINCRBY', KEYS[4], 'ver', 1)
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[3], ver, ARGV[1])
return 1
`);

// What follows the removal of ARGV[1] from the hash in both deletes: order, change log, compaction.
const AFTER_DELETE = `
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HSETNX', KEYS[4], 'epoch', ARGV[2])
local ver = redis.call('HINCRBY', KEYS[4], 'ver', 1)
redis.call('ZADD', KEYS[3], ver, ARGV[1])
compact(KEYS[1], KEYS[3], KEYS[4], ARGV[2])
return 1
`;

const DELETE = lua(`${COMPACT}
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
${AFTER_DELETE}`);

// Compare-and-delete on the SHA-1 of the stored JSON (ARGV[3]): 1 deleted, 0 gone, -1 changed since it
// was read. Otherwise exactly DELETE.
const DELETE_IF = lua(`${COMPACT}
local current = redis.call('HGET', KEYS[1], ARGV[1])
if not current then return 0 end
if redis.sha1hex(current) ~= ARGV[3] then return -1 end
redis.call('HDEL', KEYS[1], ARGV[1])
${AFTER_DELETE}`);

// What changed since a cache's (epoch, version): nothing, the changed ids with their JSON ('' = deleted)
// and sequence, or 'full' when the cache must reload (other epoch, or more changes than are worth replaying).
const SYNC = lua(`
local m = redis.call('HMGET', KEYS[4], 'epoch', 'ver')
if not m[1] then return {'', '0', 'empty'} end
if m[1] ~= ARGV[1] then return {m[1], m[2], 'full'} end
if m[2] == ARGV[2] then return {m[1], m[2], 'same'} end
local limit = tonumber(ARGV[3])
local ids = redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. ARGV[2], '+inf', 'LIMIT', 0, limit + 1)
if #ids > limit then return {m[1], m[2], 'full'} end
local out = {m[1], m[2], 'delta'}
for _, id in ipairs(ids) do
  out[#out + 1] = id
  out[#out + 1] = redis.call('HGET', KEYS[1], id) or ''
  out[#out + 1] = redis.call('ZSCORE', KEYS[2], id) or '0'
end
return out
`);

// Store a search index state, only while the partition is still in the epoch it was built in (so nothing
// is written after a restore or after the partition's keys were deleted).
const SAVE_INDEX = lua(`
if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[2], ARGV[2])
return 1
`);

// A new process's search copy without loading the records: the stored index (when it is of the current
// epoch, not newer than the records and at most ARGV[1] changes behind), the records' count, and the ids
// changed since it with their JSON ('' = deleted) and sequence. 'none' when there is no usable stored index.
const COLD = lua(`
local m = redis.call('HMGET', KEYS[4], 'epoch', 'ver')
if not m[1] then return {'', '0', 'empty'} end
local epoch, at = string.match(redis.call('GETRANGE', KEYS[5], 0, 255), '^([^\\n]*)\\n(%d+)\\n')
if epoch ~= m[1] or tonumber(at) > tonumber(m[2]) then return {m[1], m[2], 'none'} end
local limit = tonumber(ARGV[1])
local ids = redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. at, '+inf', 'LIMIT', 0, limit + 1)
if #ids > limit then return {m[1], m[2], 'none'} end
local out = {m[1], m[2], 'index', redis.call('HLEN', KEYS[1]), redis.call('GET', KEYS[5])}
for _, id in ipairs(ids) do
  out[#out + 1] = id
  out[#out + 1] = redis.call('HGET', KEYS[1], id) or ''
  out[#out + 1] = redis.call('ZSCORE', KEYS[2], id) or '0'
end
return out
`);

/** A stored record with its insertion sequence. */
export interface Stored<T> {
  seq: number;
  record: T;
}

export interface LoadedPartition<T> {
  epoch: string;
  version: string;
  /** In insertion order. */
  records: Stored<T>[];
  /** The stored search index, when one of this epoch and no newer than `version` is stored. */
  index?: StoredIndex;
}

/** A record changed since some version: its new value, or null when it was deleted. */
export interface Changed<T> {
  id: string;
  stored: Stored<T> | null;
}

/** See `RecordPartitions.coldIndex`. */
export type ColdIndex<T> =
  | { kind: 'empty' | 'none'; epoch: string; version: string }
  | {
      kind: 'index';
      epoch: string;
      version: string;
      size: number;
      index: StoredIndex;
      changed: Changed<T>[];
    };

/** A stored search index state (undecoded), the version it describes and the ids changed after it. */
export interface StoredIndex {
  state: Buffer;
  version: string;
  changed: string[];
}

/** How one kind's records are parsed and indexed. */
export interface RecordKind<T> {
  name: string;
  /** Parse stored JSON (trusted: it was validated before it was written). */
  parse?(json: string): T;
  /** What to index for a record; omit for kinds that are never searched. */
  indexEntries?(record: T): Array<{ key: string; text: string }>;
  search?: LexicalIndexOptions;
  /**
   * Store the search index in Redis for new processes (see `…:idx`). Only for kinds with one index entry
   * per record, keyed by the record's id, and core's analyzer.
   */
  persistIndex?: boolean;
}

export function parseJson<T>(json: string, what: string): T {
  try {
    return JSON.parse(json) as T;
  } catch (error) {
    throw new CorruptDataError(`Stored ${what} is not valid JSON.`, { cause: error });
  }
}

/** Records per HSET / ZADD when a partition is restored. */
const CHUNK = 500;

const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');

/** Attempts of an optimistic read-modify-write before giving up under contention. */
const MAX_ATTEMPTS = 100;

/** Record operations on one kind's partitions: insert, compare-and-set update, delete, load. */
export class RecordPartitions<T> {
  constructor(
    readonly connection: RedisConnection,
    readonly kind: RecordKind<T>,
  ) {}

  parse(json: string): T {
    return this.kind.parse ? this.kind.parse(json) : parseJson<T>(json, this.kind.name);
  }

  async get(keys: PartitionKeys, id: string): Promise<T | null> {
    const json = await this.connection.run('HGET', () => this.connection.client.hget(keys.rec, id));
    return json === null ? null : this.parse(json);
  }

  /** Insert a new record; ConflictError when the id exists. */
  async insert(keys: PartitionKeys, id: string, record: T, what: string): Promise<void> {
    const inserted = await this.connection.eval<number>(INSERT, keyList(keys), [
      id,
      JSON.stringify(record),
      randomToken(),
    ]);
    if (inserted === 0) throw new ConflictError(`A ${what} with id "${id}" already exists.`);
  }

  /**
   * Read-modify-write of one record without locks: read it, compute the next version, write it only if
   * the stored JSON is still what was read (else read again). `change` returns undefined to write
   * nothing; what it throws is thrown (nothing written). When the record does not exist: a NotFoundError
   * with the message `missing`, or what `missing()` returns.
   */
  async modify<R>(
    keys: PartitionKeys,
    id: string,
    missing: string | (() => Error),
    change: (current: T) => { next: T; result: R } | { result: R; next?: undefined },
  ): Promise<R> {
    const notFound = () => (typeof missing === 'string' ? new NotFoundError(missing) : missing());
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const json = await this.connection.run('HGET', () => this.connection.client.hget(keys.rec, id));
      if (json === null) throw notFound();
      const outcome = change(this.parse(json));
      if (outcome.next === undefined) return outcome.result;
      const written = await this.connection.eval<number>(REPLACE, keyList(keys), [
        id,
        sha1(json),
        JSON.stringify(outcome.next),
        randomToken(),
      ]);
      if (written === 1) return outcome.result;
      if (written === 0) throw notFound();
    }
    throw new StorageError(
      `Gave up updating ${this.kind.name} "${id}" after ${MAX_ATTEMPTS} conflicting writes.`,
    );
  }

  async delete(keys: PartitionKeys, id: string): Promise<boolean> {
    return (await this.connection.eval<number>(DELETE, keyList(keys), [id, randomToken()])) === 1;
  }

  /**
   * Delete a record only if `check` accepts it: read it, call `check` (which throws to refuse; nothing
   * is deleted), delete it only if the stored JSON is still what was read (else read and check again).
   * False when the record does not exist. The log and compaction are those of `delete`.
   */
  async deleteIf(keys: PartitionKeys, id: string, check: (current: T) => void): Promise<boolean> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const json = await this.connection.run('HGET', () => this.connection.client.hget(keys.rec, id));
      if (json === null) return false;
      check(this.parse(json));
      const deleted = await this.connection.eval<number>(DELETE_IF, keyList(keys), [
        id,
        randomToken(),
        sha1(json),
      ]);
      if (deleted !== -1) return deleted === 1;
    }
    throw new StorageError(
      `Gave up deleting ${this.kind.name} "${id}" after ${MAX_ATTEMPTS} conflicting writes.`,
    );
  }

  /** The whole partition at one instant (MULTI), in insertion order. */
  async load(keys: PartitionKeys): Promise<LoadedPartition<T>> {
    const [meta, hash, order] = (await this.connection.transaction('load', (multi) => {
      multi.hmget(keys.meta, 'epoch', 'ver');
      multi.hgetall(keys.rec);
      multi.zrange(keys.ord, '0', '-1', 'WITHSCORES');
    })) as [Array<string | null>, Record<string, string>, string[]];
    return this.#assemble(meta, hash, order);
  }

  #assemble(meta: Array<string | null>, hash: Record<string, string>, order: string[]): LoadedPartition<T> {
    const records: Stored<T>[] = [];
    for (let i = 0; i < order.length; i += 2) {
      const json = hash[order[i]!];
      if (json !== undefined) records.push({ seq: Number(order[i + 1]), record: this.parse(json) });
    }
    return { epoch: meta[0] ?? '', version: meta[1] ?? '0', records };
  }

  /**
   * `load`, with the stored search index when it is usable: same epoch, version not newer than the
   * records', and at most `maxChanged` ids changed since (fetched in a second round trip; ids changed
   * after the load are included too, which only re-indexes them from the loaded records).
   */
  async loadForSearch(keys: PartitionKeys, maxChanged: number): Promise<LoadedPartition<T>> {
    const [meta, hash, order, stored] = (await this.connection.transaction('load', (multi) => {
      multi.hmget(keys.meta, 'epoch', 'ver');
      multi.hgetall(keys.rec);
      multi.zrange(keys.ord, '0', '-1', 'WITHSCORES');
      multi.getBuffer(keys.idx);
    })) as [Array<string | null>, Record<string, string>, string[], Buffer | null];
    const loaded = this.#assemble(meta, hash, order);
    const header = stored === null ? undefined : indexHeader(stored);
    if (!header || header.epoch !== loaded.epoch || Number(header.version) > Number(loaded.version)) {
      return loaded;
    }
    const changed =
      header.version === loaded.version
        ? []
        : await this.connection.run('ZRANGEBYSCORE', () =>
            this.connection.client.zrangebyscore(
              keys.log,
              `(${header.version}`,
              '+inf',
              'LIMIT',
              0,
              maxChanged + 1,
            ),
          );
    if (changed.length > maxChanged) return loaded;
    return {
      ...loaded,
      index: { state: stored!.subarray(header.stateAt), version: header.version, changed },
    };
  }

  /**
   * What a search needs without the records (see COLD): the stored index, the partition's size and the
   * records changed since the index, all at one instant. `none` when no usable index is stored.
   */
  async coldIndex(keys: PartitionKeys, maxChanged: number): Promise<ColdIndex<T>> {
    const reply = await this.connection.evalBuffer<Array<Buffer | number>>(
      COLD,
      [keys.rec, keys.ord, keys.log, keys.meta, keys.idx],
      [maxChanged],
    );
    const [epoch, version, kind] = reply.slice(0, 3).map(String) as [string, string, ColdIndex<T>['kind']];
    if (kind !== 'index') return { kind, epoch, version };
    const stored = reply[4] as Buffer;
    const header = indexHeader(stored);
    if (!header) return { kind: 'none', epoch, version };
    return {
      kind,
      epoch,
      version,
      size: Number(reply[3]),
      index: { state: stored.subarray(header.stateAt), version: header.version, changed: [] },
      changed: this.#changedOf(reply, 5),
    };
  }

  /**
   * The whole partition at one instant (as `load`) with the ids changed after `version` (at most
   * `maxChanged`; undefined when there are more): what turns a copy without records into a whole one.
   */
  async loadSince(
    keys: PartitionKeys,
    version: string,
    maxChanged: number,
  ): Promise<LoadedPartition<T> & { changed: string[] | undefined }> {
    const [meta, hash, order, changed] = (await this.connection.transaction('load', (multi) => {
      multi.hmget(keys.meta, 'epoch', 'ver');
      multi.hgetall(keys.rec);
      multi.zrange(keys.ord, '0', '-1', 'WITHSCORES');
      multi.zrangebyscore(keys.log, `(${version}`, '+inf', 'LIMIT', 0, maxChanged + 1);
    })) as [Array<string | null>, Record<string, string>, string[], string[]];
    return {
      ...this.#assemble(meta, hash, order),
      changed: changed.length > maxChanged ? undefined : changed,
    };
  }

  /**
   * A value every write to the partition changes (`FactStore.revision`): the meta hash's epoch and change
   * counter, which every write script bumps with the write. The epoch is a new token on the first write
   * after the partition was erased, on restore and on compaction, so a value never comes back. A partition
   * with no keys (never written, or erased) reads as a new token every time: a constant there would come
   * back after `eraseUser`, and a block built while another process wrote could then be reused after the
   * erasure.
   */
  async revision(keys: PartitionKeys): Promise<string> {
    const [epoch, version] = await this.connection.run('HMGET', () =>
      this.connection.client.hmget(keys.meta, 'epoch', 'ver'),
    );
    if (epoch === null && version === null) return `~${randomToken()}`;
    return `${epoch ?? ''}.${version ?? '0'}`;
  }

  /** How many records the partition holds. */
  async size(keys: PartitionKeys): Promise<number> {
    return this.connection.run('HLEN', () => this.connection.client.hlen(keys.rec));
  }

  /** Records by id (undefined: not stored). */
  async getMany(keys: PartitionKeys, ids: readonly string[]): Promise<Array<T | undefined>> {
    if (ids.length === 0) return [];
    const found = await this.connection.run('HMGET', () => this.connection.client.hmget(keys.rec, ...ids));
    return found.map((json) => (json === null ? undefined : this.parse(json)));
  }

  /** Store a partition's search index state as of `(epoch, version)`; nothing if the epoch has changed. */
  async saveIndex(
    keys: PartitionKeys,
    epoch: string,
    version: string,
    state: LexicalIndexState,
  ): Promise<void> {
    await this.connection.eval(
      SAVE_INDEX,
      [keys.meta, keys.idx],
      [epoch, Buffer.concat([Buffer.from(`${epoch}\n${version}\n`), encodeIndexState(state)])],
    );
  }

  /**
   * @internal
   * Queue the replacement of a whole partition (restore) into a MULTI: the old records go, the new ones
   * are stored in the given order, and a new epoch makes every cache of the partition reload it.
   */
  queueReplace(multi: Multi, keys: PartitionKeys, records: readonly T[], idOf: (record: T) => string): void {
    multi.del(keys.rec, keys.ord, keys.log, keys.idx);
    multi.hset(keys.meta, 'epoch', randomToken(), 'seq', records.length, 'ver', 0);
    for (let i = 0; i < records.length; i += CHUNK) {
      const fields: string[] = [];
      const order: Array<string | number> = [];
      records.slice(i, i + CHUNK).forEach((record, j) => {
        const id = idOf(record);
        fields.push(id, JSON.stringify(record));
        order.push(i + j + 1, id);
      });
      multi.hset(keys.rec, ...fields);
      multi.zadd(keys.ord, ...order);
    }
  }

  /** What changed since `(epoch, version)`; see SYNC. */
  async changes(
    keys: PartitionKeys,
    epoch: string,
    version: string,
    limit: number,
  ): Promise<
    | { kind: 'empty' | 'same' | 'full'; epoch: string; version: string }
    | {
        kind: 'delta';
        epoch: string;
        version: string;
        changed: Changed<T>[];
      }
  > {
    const reply = await this.connection.eval<string[]>(SYNC, keyList(keys), [epoch, version, limit]);
    const [newEpoch, newVersion, kind] = reply as [string, string, 'empty' | 'same' | 'full' | 'delta'];
    if (kind !== 'delta') return { kind, epoch: newEpoch, version: newVersion };
    return { kind, epoch: newEpoch, version: newVersion, changed: this.#changedOf(reply, 3) };
  }

  /** `id, json ('' = deleted), seq` triples of a script's reply from `from` on. */
  #changedOf(reply: ReadonlyArray<string | number | Buffer>, from: number): Changed<T>[] {
    const changed: Changed<T>[] = [];
    for (let i = from; i < reply.length; i += 3) {
      const json = String(reply[i + 1]);
      changed.push({
        id: String(reply[i]),
        stored: json === '' ? null : { seq: Number(reply[i + 2]), record: this.parse(json) },
      });
    }
    return changed;
  }
}

/** `epoch \n version \n` at the start of a stored index, and where the state after it starts. */
function indexHeader(stored: Buffer): { epoch: string; version: string; stateAt: number } | undefined {
  const first = stored.indexOf(0x0a);
  const second = first < 0 ? -1 : stored.indexOf(0x0a, first + 1);
  if (second < 0) return undefined;
  const version = stored.toString('latin1', first + 1, second);
  if (!/^\d+$/.test(version)) return undefined;
  return { epoch: stored.toString('utf8', 0, first), version, stateAt: second + 1 };
}

/**
 * Changes after which the stored index is written again: by a new process that replayed that many, and by
 * a process keeping its index current while others write (so a new process seldom finds more than
 * `maxDelta` changes to replay, which would mean indexing everything again).
 */
const RESAVE_AFTER = 100;
const KEEP_CURRENT_AFTER = 500;

/**
 * A partition as a search cache holds it: records by id, their order, and a lexical index built on demand.
 *
 * A copy is *whole* (every record) or, for kinds with `persistIndex`, made from the stored index alone
 * (`restoreWithout`): then it has the index and only the records it has seen since (changed ones and
 * fetched search hits), and `PartitionCache` loads the rest when a read needs every record.
 */
export class CachedPartition<T> {
  epoch = '';
  version = '0';
  /** Every record when `whole`; otherwise the ones seen, each as of `version` or newer. */
  readonly records = new Map<string, Stored<T>>();
  whole = true;
  #ordered: T[] | undefined;
  #index: LexicalIndex | undefined;
  #stored: StoredIndex | undefined;
  /** The version of the index stored in Redis as far as this copy knows. */
  #storedVersion = 0;
  /** An index to store (see `storeLater`). */
  #due: LexicalIndex | undefined;

  /** `save` stores the index when it was built here (kinds with `persistIndex`); errors are ignored. */
  constructor(
    readonly kind: RecordKind<T>,
    readonly save?: (epoch: string, version: string, state: LexicalIndexState) => Promise<void>,
  ) {}

  get(id: string): T | undefined {
    return this.records.get(id)?.record;
  }

  /** Records in insertion order (the order of the partition's `ord` set). Only for a whole copy. */
  ordered(): T[] {
    if (!this.whole) throw new Error('ordered() needs every record of the partition');
    if (!this.#ordered) {
      this.#ordered = [...this.records.values()].sort((a, b) => a.seq - b.seq).map((s) => s.record);
    }
    return this.#ordered;
  }

  index(): LexicalIndex {
    if (!this.#index) {
      const stored = this.#stored;
      this.#stored = undefined;
      const restored = stored && this.#restore(stored);
      if (restored) {
        this.#index = restored;
        this.#storedVersion = Number(stored.version);
      } else {
        const index = new LexicalIndex(this.kind.search);
        for (const record of this.ordered()) this.#indexRecord(index, record);
        this.#index = index;
      }
      if (!restored || stored.changed.length >= RESAVE_AFTER) this.#saveLater(this.#index);
    }
    return this.#index;
  }

  /** The stored index with the changes since replayed from the records; undefined when unusable. */
  #restore(stored: StoredIndex): LexicalIndex | undefined {
    try {
      const index = LexicalIndex.fromState(decodeIndexState(stored.state), this.kind.search);
      for (const id of stored.changed) {
        index.remove(id);
        const record = this.get(id);
        if (record) this.#indexRecord(index, record);
      }
      // One entry per record: any other count means the state does not describe these records.
      return index.size === this.records.size ? index : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Become a copy without records from the stored index (see `RecordPartitions.coldIndex`), replaying the
   * changes since it. False (and nothing changed) when the stored index is unusable.
   */
  restoreWithout(cold: Extract<ColdIndex<T>, { kind: 'index' }>): boolean {
    let index: LexicalIndex;
    try {
      index = LexicalIndex.fromState(decodeIndexState(cold.index.state), this.kind.search);
    } catch {
      return false;
    }
    for (const { id, stored } of cold.changed) {
      index.remove(id);
      if (stored) this.#indexRecord(index, stored.record);
    }
    // One entry per record: any other count means the state does not describe the partition.
    if (index.size !== cold.size) return false;
    this.records.clear();
    for (const { id, stored } of cold.changed) if (stored) this.records.set(id, stored);
    this.epoch = cold.epoch;
    this.version = cold.version;
    this.whole = false;
    this.#ordered = undefined;
    this.#stored = undefined;
    this.#index = index;
    this.#storedVersion = Number(cold.index.version);
    if (cold.changed.length >= RESAVE_AFTER) this.#saveLater(index);
    return true;
  }

  /**
   * Make a copy without records whole: `loaded` is the partition at a later version of the same epoch,
   * `changed` the ids changed between this copy's version and it (their entries are indexed again).
   */
  fill(loaded: LoadedPartition<T>, changed: readonly string[], idOf: (record: T) => string): void {
    this.records.clear();
    for (const stored of loaded.records) this.records.set(idOf(stored.record), stored);
    const index = this.#index;
    if (index) {
      for (const id of changed) {
        index.remove(id);
        const record = this.get(id);
        if (record) this.#indexRecord(index, record);
      }
    }
    this.epoch = loaded.epoch;
    this.version = loaded.version;
    this.whole = true;
    this.#ordered = undefined;
    this.#keepStoredCurrent();
  }

  /** Keep a record fetched for this copy without records (its sequence is unknown: `ordered` is not used). */
  remember(id: string, record: T): void {
    if (!this.whole) this.records.set(id, { seq: 0, record });
  }

  /** Mark the index to be stored by the next `storeLater`. */
  #saveLater(index: LexicalIndex): void {
    if (!this.save) return;
    this.#storedVersion = Number(this.version);
    this.#due = index;
  }

  /**
   * Store the index, if it is due, once the current call has returned: call it just before returning (a
   * search that still awaits its hits' records would otherwise wait for the export). It is stored as of
   * then: the index always describes the copy's current `(epoch, version)`, as `apply` changes both together.
   */
  storeLater(): void {
    const index = this.#due;
    const save = this.save;
    this.#due = undefined;
    if (!index || !save) return;
    const { epoch } = this;
    setImmediate(() => {
      if (this.#index !== index || this.epoch !== epoch) return;
      save(epoch, this.version, index.exportState()).catch(() => undefined);
    });
  }

  #keepStoredCurrent(): void {
    if (this.#index && Number(this.version) - this.#storedVersion >= KEEP_CURRENT_AFTER)
      this.#saveLater(this.#index);
  }

  reset(loaded: LoadedPartition<T>, idOf: (record: T) => string): void {
    this.records.clear();
    for (const stored of loaded.records) this.records.set(idOf(stored.record), stored);
    this.epoch = loaded.epoch;
    this.version = loaded.version;
    this.whole = true;
    this.#ordered = undefined;
    this.#index = undefined;
    this.#stored = loaded.index;
  }

  apply(changed: readonly Changed<T>[], epoch: string, version: string): void {
    const index = this.#index;
    for (const { id, stored } of changed) {
      this.#stored?.changed.push(id);
      const previous = this.records.get(id);
      // A copy without records may not know the previous record; its kind indexes one entry per id.
      if (index && !this.whole) index.remove(id);
      else if (index && previous) this.#unindexRecord(index, previous.record);
      if (stored) {
        this.records.set(id, stored);
        if (index) this.#indexRecord(index, stored.record);
      } else this.records.delete(id);
    }
    this.epoch = epoch;
    this.version = version;
    this.#ordered = undefined;
    this.#keepStoredCurrent();
  }

  #indexRecord(index: LexicalIndex, record: T): void {
    for (const entry of this.kind.indexEntries?.(record) ?? []) index.set(entry.key, entry.text);
  }

  #unindexRecord(index: LexicalIndex, record: T): void {
    for (const entry of this.kind.indexEntries?.(record) ?? []) index.remove(entry.key);
  }
}

export interface PartitionCacheOptions {
  /** Partitions kept in memory per store (least recently used are dropped; default 64, 0 = none). */
  partitions?: number;
  /** Changes replayed incrementally before a cache reloads the whole partition instead (default 1000). */
  maxDelta?: number;
}

/**
 * Per-process copies of recently searched partitions. Every read first asks Redis what changed since the
 * copy's version (one round trip, atomic in a Lua script) and applies it, so a copy is never stale, also
 * when other processes write: Redis holds the data, the cache only saves reloading and re-indexing it.
 */
export class PartitionCache<T> {
  readonly #entries = new Map<string, CachedPartition<T>>();
  readonly #pending = new Map<string, Promise<CachedPartition<T>>>();
  readonly #max: number;
  readonly #maxDelta: number;

  constructor(
    readonly partitions: RecordPartitions<T>,
    readonly idOf: (record: T) => string,
    options: PartitionCacheOptions = {},
  ) {
    this.#max = Math.max(0, options.partitions ?? 64);
    this.#maxDelta = Math.max(1, options.maxDelta ?? 1000);
  }

  /**
   * The partition, current as of this call. Concurrent calls for one partition share one round trip.
   * `whole: false` (a ranked search, kinds with `persistIndex`) accepts a copy without records; the
   * records of its hits then come from `recordsOf`.
   */
  async current(keys: PartitionKeys, options: { whole?: boolean } = {}): Promise<CachedPartition<T>> {
    const whole = options.whole !== false || !this.partitions.kind.persistIndex;
    const previous = this.#pending.get(keys.rec);
    const next = (previous ? previous.catch(() => undefined) : Promise.resolve(undefined)).then(() =>
      this.#sync(keys, whole),
    );
    this.#pending.set(keys.rec, next);
    try {
      return await next;
    } finally {
      if (this.#pending.get(keys.rec) === next) this.#pending.delete(keys.rec);
    }
  }

  /**
   * The records of `ids` (search hits) of a partition `current` returned: from the copy, else fetched
   * (HMGET). Undefined for a record deleted since the copy's version.
   */
  async recordsOf(
    keys: PartitionKeys,
    partition: CachedPartition<T>,
    ids: readonly string[],
  ): Promise<Array<T | undefined>> {
    const known = ids.map((id) => partition.get(id));
    const missing = partition.whole ? [] : ids.filter((_, i) => known[i] === undefined);
    if (missing.length === 0) return known;
    const { version } = partition;
    const fetched = await this.partitions.getMany(keys, missing);
    const byId = new Map(missing.map((id, i) => [id, fetched[i]]));
    // Kept only if no change was applied meanwhile (one would have to be applied to them too).
    if (partition.version === version) {
      for (const [id, record] of byId) if (record) partition.remember(id, record);
    }
    return ids.map((id, i) => known[i] ?? byId.get(id));
  }

  async #sync(keys: PartitionKeys, whole: boolean): Promise<CachedPartition<T>> {
    const cached = this.#entries.get(keys.rec);
    if (cached) {
      this.#entries.delete(keys.rec); // re-inserted below: most recently used last
      const changes = await this.partitions.changes(keys, cached.epoch, cached.version, this.#maxDelta);
      if (changes.kind !== 'full') {
        if (changes.kind === 'delta') cached.apply(changes.changed, changes.epoch, changes.version);
        if (changes.kind === 'empty') cached.reset({ epoch: '', version: '0', records: [] }, this.idOf);
        if (whole && !cached.whole) await this.#fill(keys, cached);
        return this.#keep(keys.rec, cached);
      }
    }
    const kind = this.partitions.kind;
    const fresh = new CachedPartition<T>(
      kind,
      kind.persistIndex
        ? (epoch, version, state) => this.partitions.saveIndex(keys, epoch, version, state)
        : undefined,
    );
    if (!kind.persistIndex) fresh.reset(await this.partitions.load(keys), this.idOf);
    else if (whole) fresh.reset(await this.partitions.loadForSearch(keys, this.#maxDelta), this.idOf);
    else {
      // A ranked search needs the index, not the records: the stored index and the changes since.
      const cold = await this.partitions.coldIndex(keys, this.#maxDelta);
      if (cold.kind === 'empty') fresh.reset({ epoch: '', version: '0', records: [] }, this.idOf);
      else if (cold.kind !== 'index' || !fresh.restoreWithout(cold)) {
        // No usable stored index: load everything; the index is built (and stored) from the records.
        fresh.reset(await this.partitions.load(keys), this.idOf);
      }
    }
    return this.#keep(keys.rec, fresh);
  }

  /** Load every record into a copy without records, with the changes since its version. */
  async #fill(keys: PartitionKeys, partition: CachedPartition<T>): Promise<void> {
    const loaded = await this.partitions.loadSince(keys, partition.version, this.#maxDelta);
    if (loaded.changed && loaded.epoch === partition.epoch) partition.fill(loaded, loaded.changed, this.idOf);
    else partition.reset(loaded, this.idOf);
  }

  #keep(id: string, partition: CachedPartition<T>): CachedPartition<T> {
    if (this.#max === 0) return partition;
    this.#entries.set(id, partition);
    while (this.#entries.size > this.#max) this.#entries.delete(this.#entries.keys().next().value!);
    return partition;
  }
}
