/*
 * `@kioku/core`: what an app uses — the builder and features, the stores bundle and in-memory stores,
 * the store contracts with their record types and schemas, errors, scope, tokenizer, embeddings,
 * lifecycle and structured output. What a storage adapter needs beyond this is in `@kioku/core/adapter`
 * (`./adapter.ts`); fakes for tests are in `@kioku/core/testing` (`./testing.ts`).
 */

export type * from './budget/ledger.js';
export * from './budget/token-budget.js';
export { type Clock, systemClock } from './clock.js';
export * from './context.js';
export * from './details/memory.js';
export * from './details/record.js';
// Store contracts, records and their schemas
export type * from './details/store.js';
export * from './documents/memory.js';
export * from './documents/record.js';
export type * from './documents/store.js';
export * from './embeddings/index.js';
// Errors, scope, time and tokens
export * from './errors.js';
export * from './facts/memory.js';
export * from './facts/near-duplicate.js';
export {
  type CategoryCount,
  type Fact,
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
  ProvenanceSchema,
  type ProvenanceSource,
  ProvenanceSourceSchema,
  type QuarantineMark,
  QuarantineMarkSchema,
  RuleHitSchema,
} from './facts/record.js';
export type * from './facts/store.js';
export * from './features/conversation/index.js';
export * from './features/dynamic-memory/index.js';
export * from './features/extraction/index.js';
export * from './features/feedback/index.js';
export * from './features/long-term-memory/index.js';
export * from './features/memory-manager/index.js';
export * from './features/offload/index.js';
export * from './features/plan-mode/index.js';
export * from './features/static-memory/index.js';
export * from './features/working-memory/index.js';
export * from './forget/index.js';
export {
  DEFAULT_TRANSCRIPT_ROLES,
  HYBRID_DEFAULTS,
  HybridDetailStore,
  HybridDocumentStore,
  HybridFactStore,
  type HybridKind,
  type HybridOptions,
  HybridSessionStore,
  type ReembedOptions,
  type ReembedReport,
  type ReindexReport,
  reembed,
  type TranscriptHit,
  type TranscriptQuery,
  TranscriptQuerySchema,
  type TranscriptSearchOptions,
  transcriptVectorId,
  withDetailEmbeddings,
  withDocumentEmbeddings,
  withFactEmbeddings,
  withTranscriptEmbeddings,
} from './hybrid/index.js';
export { IdSchema, UuidSchema } from './ids.js';
export * from './intent/index.js';
// Wiring, features and the turn
export * from './kioku/builder.js';
export * from './lifecycle/index.js';
export * from './limits.js';
export * from './model/structured.js';
export * from './plans/memory.js';
export * from './plans/record.js';
export type * from './plans/store.js';
export {
  CategorySchema,
  DEFAULT_CATEGORY,
  IsoDateSchema,
  type Metadata,
  MetadataSchema,
  OptionalAgentIdSchema,
  TagSchema,
  TagsSchema,
} from './records/common.js';
export { MAX_CONFLICT_ATTEMPTS, retryOnConflict } from './records/retry-on-conflict.js';
export {
  ExpectedVersionOrAbsentSchema,
  MAX_VERSION,
  RecordVersionSchema,
  type UpsertOptions,
  UpsertOptionsSchema,
  VersionSchema,
  type WriteOptions,
  WriteOptionsSchema,
} from './records/version.js';
export {
  type Scope,
  ScopeSchema,
  type SnapshotSelector,
  SnapshotSelectorSchema,
  type ThreadScope,
} from './scope.js';
export * from './sessions/kioku-sessions.js';
export * from './sessions/memory.js';
export { SESSION_DEFAULTS, type SessionStoreOptions } from './sessions/partitioned.js';
export * from './sessions/record.js';
export type * from './sessions/store.js';
export { updateKvValue } from './sessions/update-value.js';
export {
  type RestoreOptions,
  type RestoreReport,
  SNAPSHOT_FORMAT,
  SNAPSHOT_SCHEMA_VERSION,
  type SnapshotEnvelope,
} from './snapshot/envelope.js';
// The stores bundle, the in-memory stores and embeddings
export {
  bundleEmbedder,
  combineStores,
  createInMemoryStores,
  type EmbeddingsOptions,
  type InMemoryStoresOptions,
  type KiokuStores,
  STORE_KINDS,
  type StoreKind,
  withEmbeddings,
} from './stores/index.js';
export * from './tokenizer.js';
export * from './toolkit/execute.js';
export * from './toolkit/seen-versions.js';
export * from './toolkit/tool.js';
export {
  type DetectOptions,
  detectInjection,
  INJECTION_RULES,
  INJECTION_THRESHOLD,
  type InjectionRule,
  type InjectionVerdict,
  type RuleHit,
} from './trust/detector.js';
export {
  defuse,
  detailSource,
  documentSource,
  MEMORY_NOTICE,
  quoteContent,
  sourceLabel,
} from './trust/fence.js';
export {
  confirmQuarantined,
  dropQuarantined,
  explainMark,
  isQuarantined,
  listQuarantined,
  markUntrusted,
  requarantine,
  trustedFacts,
} from './trust/quarantine.js';
export * from './turn/conversation.js';
export type * from './turn/feature.js';
export * from './turn/messages.js';
export * from './turn/middleware.js';
export type * from './turn/model.js';
export * from './turn/recall.js';
export {
  EmbeddingModelIdSchema,
  PayloadFilterKeySchema,
  PayloadFilterValueSchema,
  type VectorHit,
  VectorIdsSchema,
  type VectorIndex,
  VectorKindSchema,
  type VectorModelCount,
  type VectorPoint,
  type VectorPointInput,
  VectorPointSchema,
  type VectorQuery,
  VectorQuerySchema,
  type VectorSelection,
  VectorSelectionSchema,
} from './vector/index.js';
export { InMemoryVectorIndex } from './vector/memory.js';
export {
  VECTOR_SNAPSHOT_KIND,
  type VectorPartition,
  type VectorRecord,
  VectorRecordSchema,
  type VectorSnapshot,
} from './vector/snapshot.js';
export * from './working/memory.js';
export { WORKING_DEFAULTS, type WorkingMemoryOptions } from './working/partitioned.js';
export {
  MAX_TTL_MS,
  type WorkingEntry,
  type WorkingEntryInfo,
  WorkingEntrySchema,
  type WorkingHit,
  WorkingKeySchema,
  WorkingPrefixSchema,
  type WorkingQuery,
  WorkingQuerySchema,
  type WorkingSetOptions,
  WorkingSetOptionsSchema,
} from './working/record.js';
export type * from './working/store.js';
