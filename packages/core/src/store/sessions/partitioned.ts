import { z } from 'zod';
import { type Clock, isoAt, systemClock } from '../../foundation/clock.js';
import { IsoDateSchema } from '../../foundation/record-fields.js';
import { parseScope, type Scope, type SnapshotSelector } from '../../foundation/scope.js';
import { parseOrThrow } from '../../foundation/validation.js';
import { parseWriteOptions, type UpsertOptions, type WriteOptions } from '../../foundation/version.js';
import type { ChatMessage } from '../../model/messages.js';
import type { PartitionBackend, PartitionCodec, PartitionRef, TrackedRecords } from '../backend/partition.js';
import { deepFreeze, type RecordPartition, recordPartitionCodec } from '../backend/record-partition.js';
import {
  erasePartitions,
  groupByPartition,
  type PartitionState,
  restorePartitions,
  type SnapshotMapping,
  snapshotPartitions,
} from '../backend/snapshot-io.js';
import type { RestoreOptions, RestoreReport, SnapshotEnvelope } from '../snapshot/envelope.js';
import {
  type KvEntry,
  KvEntrySchema,
  KvKeySchema,
  type PendingQuery,
  type PendingSession,
  type SessionCreateOptions,
  type SessionInfo,
  SessionInfoSchema,
  type SessionRecord,
  SessionRecordSchema,
  type TranscriptAppendOptions,
  type TranscriptEntry,
  TranscriptEntrySchema,
} from './record.js';
import {
  byWaiting,
  checkKvVersion,
  newKvSet,
  newSession,
  newTranscriptEntries,
  pendingMark,
  pendingQuery,
  sessionKey,
  sessionNotFoundError,
  transcriptAppendOptions,
  transcriptReadCount,
  versionedKvEntry,
} from './rules.js';
import type { SessionStore } from './store.js';

export interface SessionStoreOptions {
  clock?: Clock;
  /** Key-value entries per session before FIFO eviction (default 200). */
  kvCap?: number;
  /** Transcript entries per session before FIFO eviction (default 500, `transcript_cap`). */
  transcriptCap?: number;
}

export const SESSION_DEFAULTS = Object.freeze({ kvCap: 200, transcriptCap: 500 });

/** How many k-v entries and transcript entries a session keeps. */
export interface SessionCaps {
  kvCap: number;
  transcriptCap: number;
}

/** A SessionStore's caps: its options, or the defaults. */
export function sessionCaps(options: Pick<SessionStoreOptions, 'kvCap' | 'transcriptCap'>): SessionCaps {
  return {
    kvCap: options.kvCap ?? SESSION_DEFAULTS.kvCap,
    transcriptCap: options.transcriptCap ?? SESSION_DEFAULTS.transcriptCap,
  };
}

/** A k-v entry with its place in the session's order (insertion; an update moves it last). */
interface OrderedKv {
  readonly order: number;
  readonly entry: KvEntry;
}

/**
 * One session's data partition. The k-v map keeps insertion order: first key = oldest. Stored one
 * record per k-v entry (`k:<key>`, carrying its order) and per transcript entry (`t:<sequence>`), so an
 * append writes one record per message and an eviction deletes one.
 */
interface SessionData {
  kv: Map<string, OrderedKv>;
  transcript: TranscriptEntry[];
  /** The session's pending state (see `SessionStore.listPending`); kept after a clear, for its mark. */
  pending: PendingState | undefined;
  /** Sequence number of `transcript[0]`; entries are numbered on, and trimming moves it. */
  firstSeq: number;
  nextOrder: number;
  /** While a write is tracked: the k-v entries, the transcript's sequence range and the pending state before it. */
  before?:
    | { kv: Map<string, OrderedKv>; firstSeq: number; end: number; pending: PendingState | undefined }
    | undefined;
}

/** Pending appends since the last clear (`since` absent: none); `mark` counts every pending append ever. */
const PendingStateSchema = z.object({ mark: z.number().int().min(0), since: IsoDateSchema.optional() });
type PendingState = Readonly<z.infer<typeof PendingStateSchema>>;

const SessionDataFileSchema = z.object({
  kind: z.literal('sessions'),
  schemaVersion: z.literal(1),
  kv: z.array(KvEntrySchema),
  transcript: z.array(TranscriptEntrySchema),
  pending: PendingStateSchema.optional(),
});

const OrderedKvSchema = z.object({ order: z.number().int().min(0), entry: KvEntrySchema });
const DataRecordSchema = z.union([PendingStateSchema, OrderedKvSchema, TranscriptEntrySchema]);

const KV_PREFIX = 'k:';
const TRANSCRIPT_PREFIX = 't:';
/** The record holding the session's pending state. */
const PENDING_KEY = 'p:';
/** Transcript keys sort as text in sequence order. */
const SEQ_DIGITS = 12;

function sessionData(
  kv: readonly KvEntry[],
  transcript: readonly TranscriptEntry[],
  pending?: PendingState,
): SessionData {
  return {
    kv: new Map(kv.map((entry, order) => [entry.key, deepFreeze({ order, entry })])),
    transcript: transcript.map(deepFreeze),
    pending: pending && deepFreeze({ ...pending }),
    firstSeq: 0,
    nextOrder: kv.length,
  };
}

function invalid(where: string, error: z.ZodError): Error {
  const issue = error.issues[0];
  return new Error(`${where}${issue?.path.length ? `.${issue.path.join('.')}` : ''}: ${issue?.message}`);
}

const transcriptKey = (seq: number) => TRANSCRIPT_PREFIX + String(seq).padStart(SEQ_DIGITS, '0');

/**
 * A write's changed records, O(changed): the transcript only grows at its end and is trimmed at its start
 * (`transcriptAppend`), so new sequence numbers are put and trimmed ones deleted; k-v entries are compared
 * by identity with the map before the write (at most `kvCap`; entries are frozen, a change replaces one).
 * Without it every append compared all the session's records (up to 500 transcript entries) before and
 * after. Order does not matter to this codec (`keyOrdered`): every put is appended.
 */
function trackedData(state: SessionData): TrackedRecords {
  const before = state.before;
  // Called again after a failed write (a record over the limit): nothing is tracked any more.
  if (!before) return { put: [], delete: [] };
  state.before = undefined;
  const put: Array<TrackedRecords['put'][number]> = [];
  const deleted: string[] = [];
  for (const key of before.kv.keys()) if (!state.kv.has(key)) deleted.push(KV_PREFIX + key);
  for (const [key, value] of state.kv) {
    if (before.kv.get(key) !== value) put.push({ key: KV_PREFIX + key, value, append: true });
  }
  const first = state.firstSeq;
  const end = first + state.transcript.length;
  for (let seq = before.firstSeq; seq < Math.min(first, before.end); seq++) deleted.push(transcriptKey(seq));
  for (let seq = Math.max(before.end, first); seq < end; seq++) {
    put.push({ key: transcriptKey(seq), value: state.transcript[seq - first], append: true });
  }
  if (state.pending !== before.pending) {
    if (state.pending) put.push({ key: PENDING_KEY, value: state.pending, append: true });
    else deleted.push(PENDING_KEY);
  }
  return { put, delete: deleted };
}

const dataCodec: PartitionCodec<SessionData> = {
  empty: () => ({ kv: new Map(), transcript: [], pending: undefined, firstSeq: 0, nextOrder: 0 }),
  decode(data) {
    const parsed = SessionDataFileSchema.safeParse(data);
    if (!parsed.success) throw invalid('(root)', parsed.error);
    return sessionData(parsed.data.kv, parsed.data.transcript, parsed.data.pending);
  },
  encode: (state) => ({
    kind: 'sessions',
    schemaVersion: 1,
    kv: [...state.kv.values()].map((e) => e.entry),
    transcript: state.transcript,
    ...(state.pending ? { pending: state.pending } : {}),
  }),
  // A pending state alone (its session's transcript trimmed away) is kept: its mark must never repeat.
  isEmpty: (state) => state.kv.size === 0 && state.transcript.length === 0 && state.pending === undefined,
  keyOrdered: true,
  toRecords: (state) => [
    ...[...state.kv.values()].map((value) => ({ key: KV_PREFIX + value.entry.key, value })),
    ...state.transcript.map((value, i) => ({ key: transcriptKey(state.firstSeq + i), value })),
    ...(state.pending ? [{ key: PENDING_KEY, value: state.pending }] : []),
  ],
  track(state) {
    state.before = {
      kv: new Map(state.kv),
      firstSeq: state.firstSeq,
      end: state.firstSeq + state.transcript.length,
      pending: state.pending,
    };
  },
  tracked: trackedData,
  // A record read alone (`PartitionBackend.readRecord`: the pending state, by `listPending`), checked as
  // one of the partition's record shapes.
  decodeRecord(value) {
    const parsed = DataRecordSchema.safeParse(value);
    if (!parsed.success) throw invalid('(record)', parsed.error);
    return parsed.data;
  },
  fromRecords(records) {
    const kv: OrderedKv[] = [];
    const transcript: Array<{ seq: number; entry: TranscriptEntry }> = [];
    let pending: PendingState | undefined;
    for (const { key, value } of records) {
      if (key === PENDING_KEY) {
        pending = parsePendingState(value);
      } else if (key.startsWith(KV_PREFIX)) {
        const parsed = OrderedKvSchema.safeParse(value);
        if (!parsed.success) throw invalid(key, parsed.error);
        kv.push(deepFreeze(parsed.data));
      } else if (key.startsWith(TRANSCRIPT_PREFIX)) {
        const parsed = TranscriptEntrySchema.safeParse(value);
        if (!parsed.success) throw invalid(key, parsed.error);
        transcript.push({ seq: Number(key.slice(TRANSCRIPT_PREFIX.length)), entry: deepFreeze(parsed.data) });
      } else throw new Error(`unexpected session record key "${key}"`);
    }
    kv.sort((a, b) => a.order - b.order);
    transcript.sort((a, b) => a.seq - b.seq);
    return {
      kv: new Map(kv.map((e) => [e.entry.key, e])),
      transcript: transcript.map((t) => t.entry),
      pending,
      firstSeq: transcript[0]?.seq ?? 0,
      nextOrder: (kv.at(-1)?.order ?? -1) + 1,
    };
  },
};

function parsePendingState(value: unknown): PendingState {
  const parsed = PendingStateSchema.safeParse(value);
  if (!parsed.success) throw invalid(PENDING_KEY, parsed.error);
  return deepFreeze(parsed.data);
}

const indexCodec = recordPartitionCodec<SessionInfo>('sessions', SessionInfoSchema, { idOf: (s) => s.id });

const INDEX_NAME = 'index';

function indexRef(scope: Scope): PartitionRef {
  return { kind: 'sessions', userId: scope.userId, agentId: scope.agentId, name: INDEX_NAME };
}

function dataRef(scope: Scope, sessionId: string): PartitionRef {
  return { kind: 'sessions', userId: scope.userId, agentId: scope.agentId, name: sessionId.toLowerCase() };
}

type SessionPartition = RecordPartition<SessionInfo> | SessionData;

/** SessionStore over any PartitionBackend: an index partition per user + agent, a data partition per session. */
export class PartitionedSessionStore implements SessionStore {
  readonly #backend: PartitionBackend;
  readonly #clock: Clock;
  readonly #caps: SessionCaps;

  constructor(options: SessionStoreOptions & { backend: PartitionBackend }) {
    this.#backend = options.backend;
    this.#clock = options.clock ?? systemClock;
    this.#caps = sessionCaps(options);
  }

  async create(scope: Scope, options: SessionCreateOptions = {}): Promise<SessionInfo> {
    const s = parseScope(scope);
    const session = newSession(s, options, this.#clock.now());
    return this.#backend.write(indexRef(s), indexCodec, (index) => {
      index.put(session);
      return session;
    });
  }

  async get(scope: Scope, sessionId: string): Promise<SessionInfo | null> {
    const s = parseScope(scope);
    return this.#session(s, sessionId);
  }

  async list(scope: Scope): Promise<SessionInfo[]> {
    const index = await this.#backend.read(indexRef(parseScope(scope)), indexCodec);
    return [...index.records.values()];
  }

  async delete(scope: Scope, sessionId: string): Promise<boolean> {
    const s = parseScope(scope);
    const id = sessionKey(sessionId);
    const existed = await this.#backend.write(
      indexRef(s),
      indexCodec,
      (index) => index.delete(id) !== undefined,
    );
    if (existed) await this.#backend.replace(dataRef(s, id), dataCodec, dataCodec.empty());
    return existed;
  }

  async kvGet(scope: Scope, sessionId: string, key: string): Promise<KvEntry | null> {
    const s = parseScope(scope);
    parseOrThrow(KvKeySchema, key, 'key');
    const session = await this.#requireSession(s, sessionId);
    const data = await this.#backend.read(dataRef(s, session.id), dataCodec);
    return data.kv.get(key)?.entry ?? null;
  }

  async kvSet(
    scope: Scope,
    sessionId: string,
    key: string,
    value: string,
    options?: UpsertOptions,
  ): Promise<KvEntry> {
    const s = parseScope(scope);
    const set = newKvSet(key, value, isoAt(this.#clock), options);
    const session = await this.#requireSession(s, sessionId);
    return this.#backend.write(dataRef(s, session.id), dataCodec, (data) => {
      const entry = deepFreeze(versionedKvEntry(set, data.kv.get(key)?.entry));
      data.kv.delete(key); // an update moves the key to the end
      data.kv.set(key, deepFreeze({ order: data.nextOrder++, entry }));
      for (const oldest of data.kv.keys()) {
        if (data.kv.size <= this.#caps.kvCap) break;
        data.kv.delete(oldest);
      }
      return entry;
    });
  }

  async kvDelete(scope: Scope, sessionId: string, key: string, options?: WriteOptions): Promise<boolean> {
    const s = parseScope(scope);
    parseOrThrow(KvKeySchema, key, 'key');
    const { expectedVersion } = parseWriteOptions(options);
    const session = await this.#requireSession(s, sessionId);
    return this.#backend.write(dataRef(s, session.id), dataCodec, (data) => {
      checkKvVersion(key, data.kv.get(key)?.entry.version ?? 0, expectedVersion);
      return data.kv.delete(key);
    });
  }

  async kvList(scope: Scope, sessionId: string): Promise<KvEntry[]> {
    const s = parseScope(scope);
    const session = await this.#requireSession(s, sessionId);
    return [...(await this.#backend.read(dataRef(s, session.id), dataCodec)).kv.values()].map((e) => e.entry);
  }

  async transcriptAppend(
    scope: Scope,
    sessionId: string,
    entries: ChatMessage | ChatMessage[],
    options?: TranscriptAppendOptions,
  ): Promise<TranscriptEntry[]> {
    const s = parseScope(scope);
    const ts = isoAt(this.#clock);
    const { turnId, pending } = transcriptAppendOptions(options);
    const parsed = newTranscriptEntries(entries, ts, { turnId }).map(deepFreeze);
    const session = await this.#requireSession(s, sessionId);
    return this.#backend.write(dataRef(s, session.id), dataCodec, (data) => {
      if (turnId !== undefined && data.transcript.some((e) => e.turnId === turnId)) return [];
      if (pending && parsed.length > 0) {
        const mark = (data.pending?.mark ?? 0) + 1;
        data.pending = deepFreeze({ mark, since: data.pending?.since ?? ts });
      }
      data.transcript.push(...parsed);
      // A pending session keeps every entry: the outbox drops nothing its workers have not read.
      if (data.pending?.since === undefined) this.#evictPastCap(data);
      return parsed;
    });
  }

  async transcriptReadLast(scope: Scope, sessionId: string, n: number): Promise<TranscriptEntry[]> {
    const s = parseScope(scope);
    const count = transcriptReadCount(n);
    const session = await this.#requireSession(s, sessionId);
    const data = await this.#backend.read(dataRef(s, session.id), dataCodec);
    return count === 0 ? [] : data.transcript.slice(-count);
  }

  async listPending(query?: PendingQuery): Promise<PendingSession[]> {
    const { scope, limit } = pendingQuery(query);
    const found: PendingSession[] = [];
    for (const ref of await this.#backend.list('sessions', scope?.userId)) {
      if (ref.name === undefined || ref.name === INDEX_NAME) continue;
      if (scope && (ref.agentId ?? undefined) !== scope.agentId) continue;
      const state = await this.#pendingState(ref);
      if (state?.since === undefined) continue;
      found.push({
        userId: ref.userId,
        ...(ref.agentId === undefined ? {} : { agentId: ref.agentId }),
        sessionId: ref.name,
        mark: state.mark,
        since: state.since,
      });
    }
    return found.sort(byWaiting).slice(0, limit);
  }

  async clearPending(scope: Scope, sessionId: string, mark: number): Promise<boolean> {
    const s = parseScope(scope);
    const at = pendingMark(mark);
    const ref = dataRef(s, sessionKey(sessionId));
    if ((await this.#pendingState(ref))?.since === undefined) return false;
    return this.#backend.write(ref, dataCodec, (data) => {
      if (data.pending?.since === undefined || data.pending.mark !== at) return false;
      data.pending = deepFreeze({ mark: data.pending.mark });
      this.#evictPastCap(data);
      return true;
    });
  }

  /** The transcript's oldest entries past the cap, evicted. */
  #evictPastCap(data: { transcript: unknown[]; firstSeq: number }): void {
    if (data.transcript.length <= this.#caps.transcriptCap) return;
    const evicted = data.transcript.length - this.#caps.transcriptCap;
    data.transcript.splice(0, evicted);
    data.firstSeq += evicted;
  }

  /** A data partition's pending state: its one record where the backend reads records alone. */
  async #pendingState(ref: PartitionRef): Promise<PendingState | undefined> {
    const record = await this.#backend.readRecord?.(ref, dataCodec, PENDING_KEY);
    if (record) return record.value === undefined ? undefined : parsePendingState(record.value);
    return (await this.#backend.read(ref, dataCodec)).pending;
  }

  snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<SessionRecord>> {
    return snapshotPartitions(this.#backend, this.#mapping, selector, this.#clock);
  }

  eraseUser(userId: string): Promise<string[]> {
    return erasePartitions(this.#backend, this.#mapping, userId, (r) => r.session.id);
  }

  restore(snapshot: unknown, options?: RestoreOptions): Promise<RestoreReport> {
    return restorePartitions(this.#backend, this.#mapping, snapshot, options);
  }

  async #session(scope: Scope, sessionId: string): Promise<SessionInfo | null> {
    const id = sessionKey(sessionId);
    return (await this.#backend.read(indexRef(scope), indexCodec)).get(id) ?? null;
  }

  async #requireSession(scope: Scope, sessionId: string): Promise<SessionInfo> {
    const session = await this.#session(scope, sessionId);
    if (!session) throw sessionNotFoundError(sessionId);
    return session;
  }

  // Snapshots hold one record per session: its index entry plus its data partition.
  readonly #mapping: SnapshotMapping<SessionRecord, SessionPartition> = {
    kind: 'sessions',
    recordSchema: SessionRecordSchema,
    codec: indexCodec as unknown as PartitionCodec<SessionPartition>,
    partitions: async (backend, userId) =>
      (await backend.list('sessions', userId)).filter((ref) => ref.name === INDEX_NAME),
    recordsOf: async (state, ref, backend) => {
      const records: SessionRecord[] = [];
      for (const session of (state as RecordPartition<SessionInfo>).records.values()) {
        const data = await backend.read(
          dataRef({ userId: ref.userId, agentId: ref.agentId }, session.id),
          dataCodec,
        );
        records.push({
          session,
          kv: [...data.kv.values()].map((e) => e.entry),
          transcript: [...data.transcript],
        });
      }
      return records;
    },
    userIdOf: (record) => record.session.userId,
    toPartitions: (records) => {
      const out: PartitionState<SessionPartition>[] = [];
      for (const group of groupByPartition(
        records,
        (r) => indexRef(r.session),
        (r) => r.session.id.toLowerCase(),
      )) {
        const index = indexCodec.empty();
        for (const record of group.records) {
          index.put({ ...record.session, id: record.session.id.toLowerCase() });
          out.push({
            ref: dataRef(record.session, record.session.id),
            state: sessionData(record.kv, record.transcript),
            codec: dataCodec as PartitionCodec<SessionPartition>,
          });
        }
        out.unshift({ ref: group.ref, state: index });
      }
      return out;
    },
  };
}
