import { ValidationError } from '../../foundation/errors.js';
import { IdSchema } from '../../foundation/ids.js';
import { parseScope, type Scope, type SnapshotSelector } from '../../foundation/scope.js';
import { parseOrThrow } from '../../foundation/validation.js';
import type { DetailRecord } from '../details/record.js';
import type { DetailStore } from '../details/store.js';
import type { KnowledgeDocument } from '../documents/record.js';
import type { DocumentStore } from '../documents/store.js';
import type { Embedder } from '../embeddings/embedder.js';
import type { Fact } from '../facts/record.js';
import type { FactStore } from '../facts/store.js';
import type { SessionRecord } from '../sessions/record.js';
import type { SessionStore } from '../sessions/store.js';
import type { VectorIndex } from '../vector/store.js';
import {
  detailMapping,
  documentMapping,
  factMapping,
  type HybridKind,
  type KindMapping,
  transcriptMapping,
} from './kinds.js';
import { type ReindexReport, reindexRecords } from './reindex.js';
import type { HybridOptions } from './vector-side.js';
import { VectorSide } from './vector-side.js';

type AnyStore = FactStore | DocumentStore | DetailStore | SessionStore;

export interface ReembedOptions extends Omit<HybridOptions, 'embedder' | 'index'> {
  /** The store whose records are embedded (a plain store or its hybrid wrapper). */
  store: AnyStore;
  /** Which kind of vectors; inferred from the store's methods when left out. */
  kind?: HybridKind;
  /** The embedder to rebuild with (the new model). */
  embedder: Embedder;
  /** The index to rebuild (its dimensions must be the embedder's). */
  index: VectorIndex;
  /** Exactly one of `scope` (one user + agent partition), `userId` (all of a user's) or `allUsers`. */
  scope?: Scope;
  userId?: string;
  allUsers?: true;
  /** `transcript` only: which entries get vectors (default user and assistant messages). */
  roles?: SessionRecord['transcript'][number]['role'][];
  signal?: AbortSignal;
}

export interface ReembedReport extends ReindexReport {
  kind: HybridKind;
  /** The model the vectors were rebuilt with. */
  model: string;
}

function inferKind(store: AnyStore): HybridKind {
  if ('categories' in store) return 'facts';
  if ('combinedText' in store) return 'documents';
  if ('deactivate' in store) return 'details';
  if ('transcriptAppend' in store) return 'transcript';
  throw new ValidationError('reembed: cannot tell which kind of store this is; pass `kind`.');
}

/**
 * Rebuild vectors with `embedder`: the answer to an `EmbeddingModelMismatchError`, and the way to give
 * vectors to records written before hybrid recall was switched on. For each index partition of the
 * target, every vector of the kind is removed (whatever model made it), then the store's current
 * records are embedded in batches and written with the new model id.
 *
 * `userId` and `allUsers` read the records through the store's `snapshot()`, so they see every agent
 * partition; index partitions that no longer have any record in the store are not visited: their old
 * vectors stay (searches there keep reporting the mismatch) until `reembed` names that `scope`, which
 * clears them, or `index.clear(scope)` does. Searches of a partition during its rebuild see
 * fewer vectors, never mixed ones.
 */
export async function reembed(options: ReembedOptions): Promise<ReembedReport> {
  const targets = [options.scope, options.userId, options.allUsers].filter((t) => t !== undefined);
  if (targets.length !== 1) {
    throw new ValidationError('reembed needs exactly one of `scope`, `userId` or `allUsers: true`.');
  }
  const kind = options.kind ?? inferKind(options.store);
  const side = new VectorSide(kind, options.embedder, { ...options, modelCheckTtlMs: 0 });
  const run = async <R>(mapping: KindMapping<R>, records: R[], extraScopes: Scope[]) => ({
    kind,
    model: options.embedder.modelId,
    ...(await reindexRecords(side, mapping, records, {
      extraScopes,
      ...(options.signal ? { signal: options.signal } : {}),
    })),
  });

  let selector: SnapshotSelector | undefined;
  let scope: Scope | undefined;
  if (options.scope !== undefined) {
    const s = parseScope(options.scope);
    scope = s.agentId === undefined ? { userId: s.userId } : { userId: s.userId, agentId: s.agentId };
  } else if (options.userId !== undefined) {
    selector = { userId: parseOrThrow(IdSchema, options.userId, 'user id') };
  } else {
    if (options.allUsers !== true) throw new ValidationError('reembed: `allUsers` must be true.');
    selector = { allUsers: true };
  }
  const extra = (s: Scope): Scope[] => [s];
  const userScope = selector && 'userId' in selector ? [{ userId: selector.userId }] : [];

  switch (kind) {
    case 'facts': {
      const store = options.store as FactStore;
      if (scope) return run<Fact>(factMapping, await store.list(scope), extra(scope));
      return run<Fact>(factMapping, (await store.snapshot(selector!)).records, userScope);
    }
    case 'documents': {
      const store = options.store as DocumentStore;
      if (scope) return run<KnowledgeDocument>(documentMapping, await store.list(scope), extra(scope));
      return run<KnowledgeDocument>(documentMapping, (await store.snapshot(selector!)).records, userScope);
    }
    case 'details': {
      const store = options.store as DetailStore;
      if (scope) {
        const user = { userId: scope.userId };
        return run<DetailRecord>(detailMapping, await store.list(user), extra(user));
      }
      return run<DetailRecord>(detailMapping, (await store.snapshot(selector!)).records, userScope);
    }
    case 'transcript': {
      const store = options.store as SessionStore;
      const mapping = transcriptMapping(options.roles);
      if (scope) {
        const records: SessionRecord[] = [];
        for (const session of await store.list(scope)) {
          options.signal?.throwIfAborted();
          records.push({
            session,
            kv: [],
            transcript: await store.transcriptReadLast(scope, session.id, 100_000),
          });
        }
        return run<SessionRecord>(mapping, records, extra(scope));
      }
      return run<SessionRecord>(mapping, (await store.snapshot(selector!)).records, userScope);
    }
  }
}
