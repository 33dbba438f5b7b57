/*
 * `@kioku/core/store`: the six store contracts and the vector index, their record schemas, query and write
 * options, the in-memory stores one by one, hybrid (lexical + vector) wrappers, and the snapshot format —
 * for an app that reads and writes stores directly, and for an adapter author implementing a contract.
 */

// Fields, ids, versions and scope shared by every kind
export { IdSchema } from './foundation/ids.js';
export { LIMITS } from './foundation/limits.js';
export { CategorySchema, type Metadata } from './foundation/record-fields.js';
export { type SnapshotSelector, SnapshotSelectorSchema, type ThreadScope } from './foundation/scope.js';
export type { UpsertOptions, WriteOptions } from './foundation/version.js';
// Recall's ranking signals (context, session, entity, time, preference) over a fact store's search
export { DEFAULT_SIGNAL_WEIGHTS, type SignalWeights } from './search/signals/rerank.js';
// OpenTelemetry spans and metrics of every store call, for stores used without the builder
export { traceStores } from './store/bundle/with-telemetry.js';
// In-memory stores, kind by kind (`createInMemoryStores` at the root makes all six)
export { InMemoryDetailStore } from './store/details/memory.js';
// Records, inputs and queries, with their schemas
export {
  type DetailHit,
  type DetailInput,
  DetailInputSchema,
  type DetailListOptions,
  DetailListOptionsSchema,
  type DetailQuery,
  DetailQuerySchema,
  DetailRecordSchema,
} from './store/details/record.js';
// Contracts
export type { DetailStore } from './store/details/store.js';
export { InMemoryDocumentStore } from './store/documents/memory.js';
export {
  type CombinedKnowledge,
  type DocumentChunkHit,
  type DocumentInput,
  type DocumentQuery,
  DocumentQuerySchema,
  KnowledgeDocumentSchema,
} from './store/documents/record.js';
export type { DocumentStore } from './store/documents/store.js';
export type { ErasureResidue, ErasureResidueReader } from './store/erasure-residue.js';
export { InMemoryFactStore } from './store/facts/memory.js';
export {
  type CategoryCount,
  type FactFilter,
  FactFilterSchema,
  type FactHit,
  type FactInput,
  FactInputSchema,
  type FactListOptions,
  FactListOptionsSchema,
  type FactPatch,
  FactPatchSchema,
  type FactQuery,
  FactQuerySchema,
  FactSchema,
  type Provenance,
  type QuarantineMark,
} from './store/facts/record.js';
export type { FactStore } from './store/facts/store.js';
// Hybrid recall, store by store (`withEmbeddings` at the root wraps a whole bundle)
export { withDetailEmbeddings } from './store/hybrid/details.js';
export { withDocumentEmbeddings } from './store/hybrid/documents.js';
export { HybridFactStore, withFactEmbeddings } from './store/hybrid/facts.js';
export type { HybridKind } from './store/hybrid/kinds.js';
export { type ReembedReport, reembed } from './store/hybrid/reembed.js';
export {
  type TranscriptHit,
  type TranscriptQuery,
  withTranscriptEmbeddings,
} from './store/hybrid/transcript.js';
export { InMemoryPlanStore } from './store/plans/memory.js';
export {
  type ContextNote,
  PLAN_LIMITS,
  type PlanInput,
  PlanSchema,
  type PlanStep,
} from './store/plans/record.js';
export type { PlanStore } from './store/plans/store.js';
export { RecallFactStore, type RecallSignalOptions, withRecallSignals } from './store/recall/facts.js';
export { isKiokuSession, KIOKU_SESSION_KEY } from './store/sessions/kioku-sessions.js';
export { InMemorySessionStore } from './store/sessions/memory.js';
export {
  type KvEntry,
  KvKeySchema,
  type PendingQuery,
  type PendingSession,
  type SessionCreateOptions,
  type SessionRecord,
  SessionRecordSchema,
  type TranscriptAppendOptions,
} from './store/sessions/record.js';
export type { SessionStore } from './store/sessions/store.js';
export { updateKvValue } from './store/sessions/update-value.js';

// Snapshots
export {
  type RestoreOptions,
  type RestoreReport,
  SNAPSHOT_FORMAT,
  SNAPSHOT_SCHEMA_VERSION,
  type SnapshotEnvelope,
} from './store/snapshot/envelope.js';
export { InMemoryVectorIndex } from './store/vector/memory.js';
export {
  type VectorHit,
  VectorIdsSchema,
  type VectorModelCount,
  type VectorPoint,
  type VectorPointInput,
  VectorPointSchema,
  type VectorQuery,
  VectorQuerySchema,
  type VectorSelection,
  VectorSelectionSchema,
} from './store/vector/record.js';
export { type VectorRecord, VectorRecordSchema, type VectorSnapshot } from './store/vector/snapshot.js';
export type { VectorIndex } from './store/vector/store.js';
export { InMemoryWorkingMemoryStore } from './store/working/memory.js';
export {
  MAX_TTL_MS,
  type WorkingEntryInfo,
  WorkingEntrySchema,
  type WorkingHit,
  WorkingKeySchema,
  WorkingPrefixSchema,
  type WorkingQuery,
  WorkingQuerySchema,
  type WorkingSetOptions,
} from './store/working/record.js';
export type { WorkingMemoryStore } from './store/working/store.js';
