import type { Scope } from '../../foundation/scope.js';
import type { DetailRecord } from '../details/record.js';
import { detailSearchText } from '../details/rules.js';
import type { KnowledgeDocument } from '../documents/record.js';
import { chunkSearchText } from '../documents/rules.js';
import { type Fact, factSearchText } from '../facts/record.js';
import type { SessionRecord, TranscriptEntry } from '../sessions/record.js';
import { hashedVectorId, vectorId } from './ids.js';
import { filterOf, type VectorEntry } from './vector-side.js';

/** The kinds of records hybrid recall covers, as the `kind` of their vectors. */
export type HybridKind = 'facts' | 'documents' | 'details' | 'transcript';

/** How one kind of record maps to vectors: which index scope, which ids, texts and payloads. */
export interface KindMapping<R> {
  kind: HybridKind;
  /** The index partition of a record: the store's own partition (details: the user alone). */
  scopeOf(record: R): Scope;
  entriesOf(record: R): VectorEntry[];
}

const ownerScope = (r: { userId: string; agentId?: string | undefined }): Scope =>
  r.agentId === undefined ? { userId: r.userId } : { userId: r.userId, agentId: r.agentId };

export const factVectorId = (id: string) => vectorId('f', id);

/** Facts: one vector per fact, of the text lexical search indexes (title, content, tags, category). */
export const factMapping: KindMapping<Fact> = {
  kind: 'facts',
  scopeOf: ownerScope,
  entriesOf: (fact) => [{ id: factVectorId(fact.id), text: factSearchText(fact), payload: { id: fact.id } }],
};

export const chunkVectorId = (documentId: string, chunk: number) => vectorId('d', documentId, chunk);

/** Documents: one vector per chunk. */
export const documentMapping: KindMapping<KnowledgeDocument> = {
  kind: 'documents',
  scopeOf: ownerScope,
  entriesOf: (doc) =>
    doc.chunks.map((chunk) => ({
      id: chunkVectorId(doc.id, chunk.index),
      text: chunkSearchText(doc, chunk.text),
      payload: { documentId: doc.id, chunk: chunk.index },
    })),
};

export const detailVectorId = (id: string) => vectorId('x', id);

/**
 * Details: one vector per active record, in the user's partition (the detail store is per user; agent
 * and thread are payload fields that searches filter on). Deactivated records have no vector.
 */
export const detailMapping: KindMapping<DetailRecord> = {
  kind: 'details',
  scopeOf: (d) => ({ userId: d.userId }),
  entriesOf: (d) =>
    d.active
      ? [
          {
            id: detailVectorId(d.id),
            text: detailSearchText(d),
            payload: filterOf({ id: d.id, type: d.type, agentId: d.agentId, threadId: d.threadId }),
          },
        ]
      : [],
};

/** Roles whose transcript entries get vectors by default (system prompts and tool outputs do not). */
export const DEFAULT_TRANSCRIPT_ROLES: ReadonlyArray<TranscriptEntry['role']> = Object.freeze([
  'user',
  'assistant',
]);

/** Transcript entries have no id: theirs is a hash of the session and everything the entry holds. */
export function transcriptVectorId(sessionId: string, entry: TranscriptEntry): string {
  return hashedVectorId(
    't',
    JSON.stringify([
      sessionId.toLowerCase(),
      entry.ts,
      entry.role,
      entry.toolCallId ?? null,
      entry.name ?? null,
      entry.content,
    ]),
  );
}

export function transcriptEntries(
  sessionId: string,
  entries: readonly TranscriptEntry[],
  roles: ReadonlyArray<TranscriptEntry['role']>,
): VectorEntry[] {
  return entries
    .filter((e) => roles.includes(e.role) && e.content.trim() !== '')
    .map((e) => ({
      id: transcriptVectorId(sessionId, e),
      text: e.content,
      payload: { sessionId: sessionId.toLowerCase(), role: e.role, ts: e.ts },
    }));
}

/** Sessions: one vector per transcript entry of the chosen roles, with its session id in the payload. */
export function transcriptMapping(
  roles: ReadonlyArray<TranscriptEntry['role']> = DEFAULT_TRANSCRIPT_ROLES,
): KindMapping<SessionRecord> {
  return {
    kind: 'transcript',
    scopeOf: (r) => ownerScope(r.session),
    entriesOf: (r) => transcriptEntries(r.session.id, r.transcript, roles),
  };
}
