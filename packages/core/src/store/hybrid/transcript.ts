import { z } from 'zod';
import { UuidSchema } from '../../foundation/ids.js';
import { LIMITS } from '../../foundation/limits.js';
import { parseScope, type Scope, type SnapshotSelector } from '../../foundation/scope.js';
import { parseOrThrow } from '../../foundation/validation.js';
import type { UpsertOptions, WriteOptions } from '../../foundation/version.js';
import type { ChatMessage } from '../../model/messages.js';
import { ChatRoleSchema } from '../../model/messages.js';
import { LexicalIndex } from '../../search/lexical-index.js';
import type { ErasureResidue } from '../erasure-residue.js';
import type {
  KvEntry,
  PendingQuery,
  PendingSession,
  SessionCreateOptions,
  SessionInfo,
  SessionRecord,
  TranscriptAppendOptions,
  TranscriptEntry,
} from '../sessions/record.js';
import { sessionNotFoundError } from '../sessions/rules.js';
import type { SessionStore } from '../sessions/store.js';
import type { RestoreOptions, RestoreReport, SnapshotEnvelope } from '../snapshot/envelope.js';
import { reciprocalRankFusion } from './fusion.js';
import {
  DEFAULT_TRANSCRIPT_ROLES,
  type KindMapping,
  transcriptEntries,
  transcriptMapping,
  transcriptVectorId,
} from './kinds.js';
import { type ReindexReport, reindexRecords } from './reindex.js';
import { filterOf, type HybridOptions, VectorSide } from './vector-side.js';

export const TranscriptQuerySchema = z.object({
  query: z.string().trim().min(1).max(LIMITS.queryChars),
  /** One session; by default every session of the scope. */
  sessionId: UuidSchema.optional(),
  limit: z.number().int().min(1).max(200).default(5),
});

export type TranscriptQuery = z.input<typeof TranscriptQuerySchema>;

export interface TranscriptHit {
  sessionId: string;
  entry: TranscriptEntry;
  /** RRF score with an embedder, BM25 score without one; comparable only within one result list. */
  score: number;
}

export interface TranscriptSearchOptions extends HybridOptions {
  /** Which entries are searched (and get vectors): default `user` and `assistant` messages. */
  roles?: ReadonlyArray<TranscriptEntry['role']>;
}

const indexScope = (scope: Scope): Scope =>
  scope.agentId === undefined ? { userId: scope.userId } : { userId: scope.userId, agentId: scope.agentId };

/** The most entries read per session: every one a transcript can hold. */
const READ_ALL = 100_000;

/**
 * A SessionStore that can search its transcripts: `searchTranscript` ranks the entries of one session
 * (or all of the scope's) lexically, with the same BM25 index lexical search uses elsewhere, and — with
 * an embedder — fuses the nearest entry vectors in (reciprocal rank fusion). Appended entries of the
 * searched roles are embedded; a deleted session's vectors are deleted. Entries evicted by the
 * transcript cap keep their vector until a search notices the entry is gone and drops it.
 */
export class HybridSessionStore implements SessionStore {
  readonly store: SessionStore;
  readonly vectors: VectorSide | undefined;
  readonly roles: ReadonlyArray<TranscriptEntry['role']>;
  readonly #mapping: KindMapping<SessionRecord>;

  constructor(store: SessionStore, options: TranscriptSearchOptions = {}) {
    this.store = store;
    this.roles = parseOrThrow(
      z.array(ChatRoleSchema).min(1),
      [...(options.roles ?? DEFAULT_TRANSCRIPT_ROLES)],
      'transcript roles',
    );
    this.vectors = options.embedder ? new VectorSide('transcript', options.embedder, options) : undefined;
    this.#mapping = transcriptMapping(this.roles);
  }

  create(scope: Scope, options?: SessionCreateOptions): Promise<SessionInfo> {
    return this.store.create(scope, options);
  }
  get(scope: Scope, sessionId: string): Promise<SessionInfo | null> {
    return this.store.get(scope, sessionId);
  }
  list(scope: Scope): Promise<SessionInfo[]> {
    return this.store.list(scope);
  }
  kvGet(scope: Scope, sessionId: string, key: string): Promise<KvEntry | null> {
    return this.store.kvGet(scope, sessionId, key);
  }
  kvSet(
    scope: Scope,
    sessionId: string,
    key: string,
    value: string,
    options?: UpsertOptions,
  ): Promise<KvEntry> {
    return this.store.kvSet(scope, sessionId, key, value, options);
  }
  kvDelete(scope: Scope, sessionId: string, key: string, options?: WriteOptions): Promise<boolean> {
    return this.store.kvDelete(scope, sessionId, key, options);
  }
  kvList(scope: Scope, sessionId: string): Promise<KvEntry[]> {
    return this.store.kvList(scope, sessionId);
  }
  transcriptReadLast(scope: Scope, sessionId: string, n: number): Promise<TranscriptEntry[]> {
    return this.store.transcriptReadLast(scope, sessionId, n);
  }
  listPending(query?: PendingQuery): Promise<PendingSession[]> {
    return this.store.listPending(query);
  }
  clearPending(scope: Scope, sessionId: string, mark: number): Promise<boolean> {
    return this.store.clearPending(scope, sessionId, mark);
  }
  /** The records only: `forgetUser` erases the user's vectors from the index once, for every kind. */
  eraseUser(userId: string): Promise<string[]> {
    return this.store.eraseUser(userId);
  }

  /** The wrapped store's derived places (the vector index is checked by `verifyErased` itself). */
  erasureResidue(userId: string): Promise<ErasureResidue[]> {
    return this.store.erasureResidue?.(userId) ?? Promise.resolve([]);
  }

  snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<SessionRecord>> {
    return this.store.snapshot(selector);
  }

  async transcriptAppend(
    scope: Scope,
    sessionId: string,
    entries: ChatMessage | ChatMessage[],
    options?: TranscriptAppendOptions,
  ): Promise<TranscriptEntry[]> {
    const s = indexScope(parseScope(scope));
    await this.vectors?.ensureModel(s);
    const appended = await this.store.transcriptAppend(scope, sessionId, entries, options);
    await this.vectors?.write(s, transcriptEntries(sessionId, appended, this.roles));
    return appended;
  }

  async delete(scope: Scope, sessionId: string): Promise<boolean> {
    const s = indexScope(parseScope(scope));
    const entries = this.vectors ? await this.#readAll(scope, sessionId) : [];
    const deleted = await this.store.delete(scope, sessionId);
    if (this.vectors && entries.length > 0) {
      await this.vectors.remove(
        s,
        entries.map((e) => transcriptVectorId(sessionId, e)),
      );
    }
    return deleted;
  }

  /** Entries most relevant to the query, best first. */
  async searchTranscript(scope: Scope, query: TranscriptQuery): Promise<TranscriptHit[]> {
    const s = parseScope(scope);
    const q = parseOrThrow(TranscriptQuerySchema, query, 'transcript query');
    const sessionIds = q.sessionId
      ? [await this.#sessionId(scope, q.sessionId)]
      : (await this.store.list(scope)).map((info) => info.id);
    const byId = new Map<string, TranscriptHit>();
    const lexical = new LexicalIndex();
    for (const sessionId of sessionIds) {
      for (const entry of await this.store.transcriptReadLast(scope, sessionId, READ_ALL)) {
        if (!this.roles.includes(entry.role) || entry.content.trim() === '') continue;
        const id = transcriptVectorId(sessionId, entry);
        byId.set(id, { sessionId: sessionId.toLowerCase(), entry, score: 0 });
        lexical.set(id, entry.content);
      }
    }
    const pool = this.vectors?.candidates(q.limit) ?? q.limit;
    const lexicalHits = lexical.search(q.query, { limit: pool });
    if (!this.vectors) return lexicalHits.map((hit) => ({ ...byId.get(hit.id)!, score: hit.score }));

    const filter = filterOf({ sessionId: q.sessionId?.toLowerCase() });
    const nearest = await this.vectors.search(indexScope(s), q.query, pool, filter);
    const gone = nearest.filter((hit) => !byId.has(hit.id)).map((hit) => hit.id);
    await this.vectors.forget(indexScope(s), gone);
    return reciprocalRankFusion(
      [
        lexicalHits.map((hit) => ({ key: hit.id, item: byId.get(hit.id)! })),
        nearest.filter((hit) => byId.has(hit.id)).map((hit) => ({ key: hit.id, item: byId.get(hit.id)! })),
      ],
      this.vectors.fusion,
    )
      .slice(0, q.limit)
      .map(({ item, score }) => ({ ...item, score }));
  }

  async restore(snapshot: unknown, options?: RestoreOptions): Promise<RestoreReport> {
    const report = await this.store.restore(snapshot, options);
    if (this.vectors) {
      await reindexRecords(
        this.vectors,
        this.#mapping,
        (snapshot as SnapshotEnvelope<SessionRecord>).records,
      );
    }
    return report;
  }

  /** Rebuild the transcript vectors of these sessions' partitions (see `reembed`). */
  reindex(
    records: readonly SessionRecord[],
    options?: { signal?: AbortSignal; extraScopes?: readonly Scope[] },
  ): Promise<ReindexReport> {
    if (!this.vectors)
      return Promise.resolve({ partitions: 0, records: records.length, vectors: 0, removed: 0 });
    return reindexRecords(this.vectors, this.#mapping, records, options);
  }

  /** The caller's session id as stored; NotFoundError when the session is not the caller's. */
  async #sessionId(scope: Scope, sessionId: string): Promise<string> {
    const session = await this.store.get(scope, sessionId);
    if (!session) throw sessionNotFoundError(sessionId);
    return session.id;
  }

  async #readAll(scope: Scope, sessionId: string): Promise<TranscriptEntry[]> {
    try {
      return await this.store.transcriptReadLast(scope, sessionId, READ_ALL);
    } catch {
      return []; // not this user's session (or not a session id): the store's delete says so
    }
  }
}

/**
 * Transcript search for a SessionStore: hybrid with an embedder, lexical (BM25 over the entries) without
 * one. Either way the result has `searchTranscript`.
 */
export function withTranscriptEmbeddings(
  sessions: SessionStore,
  options: TranscriptSearchOptions = {},
): HybridSessionStore {
  return new HybridSessionStore(sessions, options);
}
