import type { ChatMessage, Scope, SessionInfo, TranscriptEntry } from '@kioku/core';
import {
  byWaiting,
  checkKvVersion,
  isoAt,
  newKvSet,
  newSession,
  newTranscriptEntries,
  parseOrThrow,
  parseScope,
  parseWriteOptions,
  pendingMark,
  pendingQuery,
  type SessionCaps,
  type SessionStoreOptions,
  sessionCaps,
  sessionKey,
  sessionNotFoundError,
  transcriptAppendOptions,
  transcriptReadCount,
} from '@kioku/core/adapter';
import {
  type KvEntry,
  KvKeySchema,
  type PendingQuery,
  type PendingSession,
  type RestoreOptions,
  type RestoreReport,
  type SessionCreateOptions,
  type SessionRecord,
  SessionRecordSchema,
  type SessionStore,
  type SnapshotEnvelope,
  type SnapshotSelector,
  type TranscriptAppendOptions,
  type UpsertOptions,
  type WriteOptions,
} from '@kioku/core/store';
import { RedisStoreBase, type RedisStoreOptions } from './base.js';
import { lua } from './connection.js';
import { decodePart, encodePart, NO_AGENT } from './keys.js';
import { parseJson } from './records.js';

export type RedisSessionStoreOptions = RedisStoreOptions & SessionStoreOptions;

// Every script that touches a session's data first checks the session is in the caller's index, in the
// same script: a concurrent delete can never leave data behind for a session that no longer exists.

/**
 * A k-v entry is stored as its JSON with `"version":n` as the last field, which the scripts add (from JSON
 * without it) and read back with `kvVersion`: 0 when the key has no entry, 1 for entries stored before
 * versions existed (no such field).
 */
const KV_VERSION = `
local function kvVersion(json)
  if not json then return 0 end
  return tonumber(string.match(string.sub(json, -24), ',"version":(%d+)}$') or '1')
end
`;

/** KEYS idx, ord, meta. ARGV id, session JSON. */
const CREATE = lua(`
local seq = redis.call('HINCRBY', KEYS[3], 'seq', 1)
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], seq, ARGV[1])
return seq
`);

/** KEYS idx, ord, kv, kvo, tr, p, turns, pending, global pending. ARGV id, global member. */
const DELETE = lua(`
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('DEL', KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7])
redis.call('ZREM', KEYS[8], ARGV[1])
redis.call('ZREM', KEYS[9], ARGV[2])
return 1
`);

/**
 * KEYS idx, kv, kvo, meta. ARGV id, key, entry JSON (without its version), cap, expected version ('' for
 * none). Core's rule: the entry's version is one more than the key's current one (1 when it has none), and
 * a given expected version must equal the current one (0: none), else nothing changes and {-2, current} is
 * returned. An update moves the key to the end; FIFO past the cap. {1, version} when written, {-1, 0} when
 * the session is not the caller's.
 */
const KV_SET = lua(`${KV_VERSION}
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return {-1, 0} end
local current = kvVersion(redis.call('HGET', KEYS[2], ARGV[2]))
if ARGV[5] ~= '' and tonumber(ARGV[5]) ~= current then return {-2, current} end
local version = current + 1
redis.call('HSET', KEYS[2], ARGV[2], string.sub(ARGV[3], 1, -2) .. ',"version":' .. version .. '}')
redis.call('ZADD', KEYS[3], redis.call('HINCRBY', KEYS[4], 'seq', 1), ARGV[2])
local over = redis.call('ZCARD', KEYS[3]) - tonumber(ARGV[4])
if over > 0 then
  for _, k in ipairs(redis.call('ZRANGE', KEYS[3], 0, over - 1)) do redis.call('HDEL', KEYS[2], k) end
  redis.call('ZREMRANGEBYRANK', KEYS[3], 0, over - 1)
end
return {1, version}
`);

/**
 * KEYS idx, kv, kvo. ARGV id, key, expected version ('' for none). {1, version} when the key had an entry,
 * {0, 0} when not, {-2, current} without deleting when the expected version differs, {-1, 0} when the
 * session is not the caller's.
 */
const KV_DELETE = lua(`${KV_VERSION}
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return {-1, 0} end
local current = kvVersion(redis.call('HGET', KEYS[2], ARGV[2]))
if ARGV[3] ~= '' and tonumber(ARGV[3]) ~= current then return {-2, current} end
redis.call('ZREM', KEYS[3], ARGV[2])
return {redis.call('HDEL', KEYS[2], ARGV[2]), current}
`);

/**
 * KEYS idx, tr, p, turns, pending, global pending. ARGV id, cap, 1 to mark pending (else 0), time (ms),
 * turn id ('' for none), global member, entries… (appended in order, then trimmed to the last cap unless
 * the session is pending: the outbox drops nothing its workers have not read; CLEAR_PENDING trims).
 * A turn id in the session's turn ids (the last `cap` of them) appends nothing (0). With pending, the
 * session's mark moves on and, when it was not pending, it joins the user's and the global pending sets
 * scored by the time. -1: the session is not the caller's.
 */
const APPEND = lua(`
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return -1 end
local cap = tonumber(ARGV[2])
if ARGV[5] ~= '' then
  if redis.call('ZSCORE', KEYS[4], ARGV[5]) then return 0 end
  redis.call('ZADD', KEYS[4], redis.call('HINCRBY', KEYS[3], 'turns', 1), ARGV[5])
  redis.call('ZREMRANGEBYRANK', KEYS[4], 0, -(cap + 1))
end
if ARGV[3] == '1' and #ARGV >= 7 then
  redis.call('HINCRBY', KEYS[3], 'mark', 1)
  if redis.call('HSETNX', KEYS[3], 'since', ARGV[4]) == 1 then
    redis.call('ZADD', KEYS[5], ARGV[4], ARGV[1])
    redis.call('ZADD', KEYS[6], ARGV[4], ARGV[6])
  end
end
for i = 7, #ARGV do redis.call('RPUSH', KEYS[2], ARGV[i]) end
if not redis.call('HGET', KEYS[3], 'since') then redis.call('LTRIM', KEYS[2], -cap, -1) end
return 1
`);

/**
 * KEYS p, pending, global pending, tr. ARGV mark, id, global member, cap. 1 when cleared at that mark; the
 * transcript is then trimmed to the last cap entries (the appends kept them all while it was pending).
 */
const CLEAR_PENDING = lua(`
if not redis.call('HGET', KEYS[1], 'since') then return 0 end
if tonumber(redis.call('HGET', KEYS[1], 'mark') or '0') ~= tonumber(ARGV[1]) then return 0 end
redis.call('HDEL', KEYS[1], 'since')
redis.call('ZREM', KEYS[2], ARGV[2])
redis.call('ZREM', KEYS[3], ARGV[3])
redis.call('LTRIM', KEYS[4], -tonumber(ARGV[4]), -1)
return 1
`);

/** KEYS pending, global pending. ARGV member prefix. Takes a partition's sessions off both sets. */
const DROP_PENDING = lua(`
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do redis.call('ZREM', KEYS[2], ARGV[1] .. id) end
redis.call('DEL', KEYS[1])
return 1
`);

/** KEYS idx, ord. ARGV base. Every session of the partition with its k-v (pairs, order) and transcript. */
const DUMP = lua(`
local out = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  local info = redis.call('HGET', KEYS[1], id)
  if info then
    local d = ARGV[1] .. ':s:' .. id
    out[#out + 1] = {
      info,
      redis.call('HGETALL', d .. ':kv'),
      redis.call('ZRANGE', d .. ':kvo', 0, -1),
      redis.call('LRANGE', d .. ':tr', 0, -1),
    }
  end
end
return out
`);

/**
 * KEYS idx, ord, meta, pending, global pending. ARGV base, global member prefix, then per session: id,
 * session JSON, k-v count, (key, entry JSON)…, transcript count, entry JSON…. Removes every session of
 * the partition (with its data and pending state) first; the restored transcripts' turn ids are known again.
 */
const RESTORE = lua(`
for _, id in ipairs(redis.call('HKEYS', KEYS[1])) do
  local d = ARGV[1] .. ':s:' .. id
  redis.call('DEL', d .. ':kv', d .. ':kvo', d .. ':tr', d .. ':p', d .. ':turns')
end
for _, id in ipairs(redis.call('ZRANGE', KEYS[4], 0, -1)) do redis.call('ZREM', KEYS[5], ARGV[2] .. id) end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[4])
local i, seq = 3, 0
while i <= #ARGV do
  local id = ARGV[i]
  local d = ARGV[1] .. ':s:' .. id
  seq = seq + 1
  redis.call('HSET', KEYS[1], id, ARGV[i + 1])
  redis.call('ZADD', KEYS[2], seq, id)
  i = i + 2
  for _ = 1, tonumber(ARGV[i]) do
    seq = seq + 1
    redis.call('HSET', d .. ':kv', ARGV[i + 1], ARGV[i + 2])
    redis.call('ZADD', d .. ':kvo', seq, ARGV[i + 1])
    i = i + 2
  end
  i = i + 1
  local n = tonumber(ARGV[i])
  for j = 1, n do
    redis.call('RPUSH', d .. ':tr', ARGV[i + j])
    local turn = cjson.decode(ARGV[i + j])['turnId']
    if type(turn) == 'string' then
      redis.call('ZADD', d .. ':turns', redis.call('HINCRBY', d .. ':p', 'turns', 1), turn)
    end
  end
  i = i + n + 1
end
redis.call('HSET', KEYS[3], 'seq', seq)
return 1
`);

/** An entry's stored JSON (`kvVersion` reads the version there, its last field). */
function storedJson(entry: KvEntry): string {
  return JSON.stringify({ key: entry.key, value: entry.value, ts: entry.ts, version: entry.version });
}

/** An entry's JSON without its version, which the set script adds. */
function unversionedJson(entry: KvEntry): string {
  return JSON.stringify({ key: entry.key, value: entry.value, ts: entry.ts });
}

/** A stored entry; one stored before versions existed is at version 1. */
function parseStored(json: string): KvEntry {
  const entry = parseJson<Omit<KvEntry, 'version'> & { version?: number }>(json, 'session k-v entry');
  return { ...entry, version: entry.version ?? 1 };
}

interface SessionKeys {
  base: string;
  idx: string;
  ord: string;
  meta: string;
  /** ZSET session id → the time it became pending. */
  pending: string;
  /** This partition's prefix of a global pending member. */
  member: string;
}

interface DataKeys {
  kv: string;
  kvo: string;
  tr: string;
  /** HASH mark (pending appends ever), since (ms, while pending), turns (turn ids ever). */
  p: string;
  /** ZSET turn id → its order: the last `transcriptCap` turn ids appended. */
  turns: string;
}

/**
 * Sessions per user + agent: an index (`…:idx` HASH id → session, `…:ord` ZSET for creation order) and
 * per session a k-v HASH (`…:s:<id>:kv`, key → entry JSON ending in its version) with its order (`…:kvo`, an
 * update moves a key to the end) and a transcript LIST (`…:tr`). Caps and k-v versions are checked in the
 * same Lua script as the write.
 */
export class RedisSessionStore extends RedisStoreBase implements SessionStore {
  readonly #caps: SessionCaps;

  constructor(options: RedisSessionStoreOptions) {
    super(options);
    this.#caps = sessionCaps(options);
  }

  async create(scope: Scope, options: SessionCreateOptions = {}): Promise<SessionInfo> {
    const s = parseScope(scope);
    const session = newSession(s, options, this.clock.now());
    const k = this.#keysFor(s);
    await this.connection.eval(CREATE, [k.idx, k.ord, k.meta], [session.id, JSON.stringify(session)]);
    return session;
  }

  async get(scope: Scope, sessionId: string): Promise<SessionInfo | null> {
    const s = parseScope(scope);
    const id = sessionKey(sessionId);
    const json = await this.connection.run('HGET', () =>
      this.connection.client.hget(this.#keysFor(s).idx, id),
    );
    return json === null ? null : parseJson<SessionInfo>(json, 'session');
  }

  async list(scope: Scope): Promise<SessionInfo[]> {
    const k = this.#keysFor(parseScope(scope));
    const [hash, order] = (await this.connection.transaction('session list', (multi) => {
      multi.hgetall(k.idx);
      multi.zrange(k.ord, '0', '-1');
    })) as [Record<string, string>, string[]];
    return order.flatMap((id) =>
      hash[id] === undefined ? [] : [parseJson<SessionInfo>(hash[id], 'session')],
    );
  }

  async delete(scope: Scope, sessionId: string): Promise<boolean> {
    const k = this.#keysFor(parseScope(scope));
    const id = sessionKey(sessionId);
    const d = this.#dataKeys(k, id);
    return (
      (await this.connection.eval<number>(
        DELETE,
        [k.idx, k.ord, d.kv, d.kvo, d.tr, d.p, d.turns, k.pending, this.#globalPending],
        [id, k.member + id],
      )) === 1
    );
  }

  async kvGet(scope: Scope, sessionId: string, key: string): Promise<KvEntry | null> {
    const k = this.#keysFor(parseScope(scope));
    parseOrThrow(KvKeySchema, key, 'key');
    const id = sessionKey(sessionId);
    const [exists, json] = (await this.connection.transaction('session kvGet', (multi) => {
      multi.hexists(k.idx, id);
      multi.hget(this.#dataKeys(k, id).kv, key);
    })) as [number, string | null];
    if (!exists) throw sessionNotFoundError(sessionId);
    return json === null ? null : parseStored(json);
  }

  async kvSet(
    scope: Scope,
    sessionId: string,
    key: string,
    value: string,
    options?: UpsertOptions,
  ): Promise<KvEntry> {
    const k = this.#keysFor(parseScope(scope));
    const set = newKvSet(key, value, isoAt(this.clock), options);
    const id = sessionKey(sessionId);
    const d = this.#dataKeys(k, id);
    const [outcome, version] = await this.connection.eval<[number, number]>(
      KV_SET,
      [k.idx, d.kv, d.kvo, k.meta],
      [id, key, unversionedJson(set.entry), this.#caps.kvCap, set.expectedVersion ?? ''],
    );
    if (outcome === -1) throw sessionNotFoundError(sessionId);
    if (outcome === -2) checkKvVersion(key, version, set.expectedVersion);
    return { ...set.entry, version };
  }

  async kvDelete(scope: Scope, sessionId: string, key: string, options?: WriteOptions): Promise<boolean> {
    const k = this.#keysFor(parseScope(scope));
    parseOrThrow(KvKeySchema, key, 'key');
    const { expectedVersion } = parseWriteOptions(options);
    const id = sessionKey(sessionId);
    const d = this.#dataKeys(k, id);
    const [outcome, version] = await this.connection.eval<[number, number]>(
      KV_DELETE,
      [k.idx, d.kv, d.kvo],
      [id, key, expectedVersion ?? ''],
    );
    if (outcome === -1) throw sessionNotFoundError(sessionId);
    if (outcome === -2) checkKvVersion(key, version, expectedVersion);
    return outcome === 1;
  }

  async kvList(scope: Scope, sessionId: string): Promise<KvEntry[]> {
    const k = this.#keysFor(parseScope(scope));
    const id = sessionKey(sessionId);
    const d = this.#dataKeys(k, id);
    const [exists, hash, order] = (await this.connection.transaction('session kvList', (multi) => {
      multi.hexists(k.idx, id);
      multi.hgetall(d.kv);
      multi.zrange(d.kvo, '0', '-1');
    })) as [number, Record<string, string>, string[]];
    if (!exists) throw sessionNotFoundError(sessionId);
    return order.flatMap((key) => (hash[key] === undefined ? [] : [parseStored(hash[key])]));
  }

  async transcriptAppend(
    scope: Scope,
    sessionId: string,
    entries: ChatMessage | ChatMessage[],
    options?: TranscriptAppendOptions,
  ): Promise<TranscriptEntry[]> {
    const k = this.#keysFor(parseScope(scope));
    const now = this.clock.now();
    const { turnId, pending } = transcriptAppendOptions(options);
    const parsed = newTranscriptEntries(entries, new Date(now).toISOString(), { turnId });
    const id = sessionKey(sessionId);
    const d = this.#dataKeys(k, id);
    const result = await this.connection.eval<number>(
      APPEND,
      [k.idx, d.tr, d.p, d.turns, k.pending, this.#globalPending],
      [
        id,
        this.#caps.transcriptCap,
        pending ? 1 : 0,
        now,
        turnId ?? '',
        k.member + id,
        ...parsed.map((e) => JSON.stringify(e)),
      ],
    );
    if (result === -1) throw sessionNotFoundError(sessionId);
    return result === 0 ? [] : parsed;
  }

  async listPending(query?: PendingQuery): Promise<PendingSession[]> {
    const { scope, limit } = pendingQuery(query);
    const k = scope && this.#keysFor(scope);
    const listed = await this.connection.run('ZRANGE', () =>
      this.connection.client.zrange(
        k ? k.pending : this.#globalPending,
        '0',
        String(limit - 1),
        'WITHSCORES',
      ),
    );
    const found: Array<{ scope: Pick<Scope, 'userId' | 'agentId'>; id: string; since: number }> = [];
    for (let i = 0; i < listed.length; i += 2) {
      const at = k ? { scope: scope!, id: listed[i]! } : this.#parseMember(listed[i]!);
      if (at) found.push({ ...at, since: Number(listed[i + 1]) });
    }
    const marks = (await this.connection.transaction('pending marks', (multi) => {
      for (const f of found) multi.hget(this.#dataKeys(this.#keysFor(f.scope), f.id).p, 'mark');
    })) as Array<string | null>;
    return found
      .map((f, i) => ({
        userId: f.scope.userId,
        ...(f.scope.agentId === undefined ? {} : { agentId: f.scope.agentId }),
        sessionId: f.id,
        mark: Number(marks[i] ?? 0),
        since: new Date(f.since).toISOString(),
      }))
      .sort(byWaiting);
  }

  async clearPending(scope: Scope, sessionId: string, mark: number): Promise<boolean> {
    const k = this.#keysFor(parseScope(scope));
    const at = pendingMark(mark);
    const id = sessionKey(sessionId);
    const cleared = await this.connection.eval<number>(
      CLEAR_PENDING,
      [this.#dataKeys(k, id).p, k.pending, this.#globalPending, this.#dataKeys(k, id).tr],
      [at, id, k.member + id, this.#caps.transcriptCap],
    );
    return cleared === 1;
  }

  async transcriptReadLast(scope: Scope, sessionId: string, n: number): Promise<TranscriptEntry[]> {
    const k = this.#keysFor(parseScope(scope));
    const count = transcriptReadCount(n);
    const id = sessionKey(sessionId);
    const [exists, items] = (await this.connection.transaction('session transcript', (multi) => {
      multi.hexists(k.idx, id);
      multi.lrange(this.#dataKeys(k, id).tr, -Math.max(count, 1), -1);
    })) as [number, string[]];
    if (!exists) throw sessionNotFoundError(sessionId);
    return count === 0 ? [] : items.map((json) => parseJson<TranscriptEntry>(json, 'transcript entry'));
  }

  eraseUser(userId: string): Promise<string[]> {
    return this.eraseKeys('sessions', userId, async () => {
      const ids = (await this.snapshot({ userId })).records.map((r) => r.session.id);
      // The global pending set is outside the user's keys: their sessions leave it first.
      for (const found of await this.partitionsOf('sessions', ':pending', userId)) {
        if (found.rest !== 'pending') continue;
        const k = this.#keysFor(found);
        await this.connection.eval(DROP_PENDING, [k.pending, this.#globalPending], [k.member]);
      }
      return ids;
    });
  }

  async snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<SessionRecord>> {
    return this.snapshotOf('sessions', selector, async (userId) => {
      const records: SessionRecord[] = [];
      for (const found of await this.partitionsOf('sessions', ':idx', userId)) {
        if (found.rest !== 'idx') continue;
        const k = this.#keysFor(found);
        const dump = await this.connection.eval<Array<[string, string[], string[], string[]]>>(
          DUMP,
          [k.idx, k.ord],
          [k.base],
        );
        for (const [info, kvPairs, kvOrder, transcript] of dump) {
          const kv = new Map<string, string>();
          for (let i = 0; i < kvPairs.length; i += 2) kv.set(kvPairs[i]!, kvPairs[i + 1]!);
          records.push({
            session: parseJson<SessionInfo>(info, 'session'),
            kv: kvOrder.flatMap((key) => {
              const json = kv.get(key);
              return json === undefined ? [] : [parseStored(json)];
            }),
            transcript: transcript.map((json) => parseJson<TranscriptEntry>(json, 'transcript entry')),
          });
        }
      }
      return records;
    });
  }

  /** Replaces, per user + agent, the whole session index with the snapshot's sessions and their data. */
  async restore(snapshot: unknown, options: RestoreOptions = {}): Promise<RestoreReport> {
    const report = await this.restoreFrom('sessions', SessionRecordSchema, snapshot, options, {
      userIdOf: (r) => r.session.userId,
      partitionOf: (r) => `${r.session.userId}/${r.session.agentId ?? NO_AGENT}`,
      idOf: (r) => r.session.id.toLowerCase(),
      replace: (multi, records) => {
        const k = this.#keysFor(records[0]!.session);
        const args: Array<string | number> = [k.base, k.member];
        for (const { session, kv, transcript } of records) {
          const id = session.id.toLowerCase();
          args.push(id, JSON.stringify({ ...session, id }), kv.length);
          for (const entry of kv) args.push(entry.key, storedJson(entry));
          args.push(transcript.length, ...transcript.map((e) => JSON.stringify(e)));
        }
        multi.eval(RESTORE.lua, 5, k.idx, k.ord, k.meta, k.pending, this.#globalPending, ...args);
      },
    });
    // Counted as core's reference counts: an index partition per user + agent, a data partition per session.
    return { ...report, partitions: report.partitions + report.records };
  }

  #keysFor(scope: Pick<Scope, 'userId' | 'agentId'>): SessionKeys {
    const base = this.keys.base('sessions', scope);
    const member = `${encodePart(scope.userId)}:${scope.agentId === undefined ? NO_AGENT : encodePart(scope.agentId)}:`;
    return {
      base,
      idx: `${base}:idx`,
      ord: `${base}:ord`,
      meta: `${base}:meta`,
      pending: `${base}:pending`,
      member,
    };
  }

  #dataKeys(keys: SessionKeys, id: string): DataKeys {
    const d = `${keys.base}:s:${encodePart(id)}`;
    return { kv: `${d}:kv`, kvo: `${d}:kvo`, tr: `${d}:tr`, p: `${d}:p`, turns: `${d}:turns` };
  }

  /** Every user's pending sessions (`<user>:<agent>:<session>`, scored by the time they became pending). */
  get #globalPending(): string {
    return `${this.keys.prefix}sessions:pending`;
  }

  #parseMember(member: string): { scope: Pick<Scope, 'userId' | 'agentId'>; id: string } | undefined {
    const [user, agent, id] = member.split(':');
    if (!user || !agent || !id) return undefined;
    return {
      scope: { userId: decodePart(user), ...(agent === NO_AGENT ? {} : { agentId: decodePart(agent) }) },
      id,
    };
  }
}
