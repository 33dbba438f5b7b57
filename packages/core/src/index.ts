/*
 * `@kioku/core`: what an app uses — the builder and features, the stores bundle and in-memory stores,
 * the store contracts with their record types and schemas, errors, scope, tokenizer, embeddings,
 * lifecycle and structured output. What a storage adapter needs beyond this is in `@kioku/core/adapter`
 * (`./adapter.ts`); fakes for tests are in `@kioku/core/testing` (`./testing.ts`).
 */

export { type Clock, systemClock } from './foundation/clock.js';
export * from './foundation/context.js';
// Errors, scope, time and tokens
export * from './foundation/errors.js';
export { IdSchema, UuidSchema } from './foundation/ids.js';
export * from './foundation/limits.js';
export {
  CategorySchema,
  DEFAULT_CATEGORY,
  IsoDateSchema,
  type Metadata,
  MetadataSchema,
  OptionalAgentIdSchema,
  TagSchema,
  TagsSchema,
} from './foundation/record-fields.js';
export { MAX_CONFLICT_ATTEMPTS, retryOnConflict } from './foundation/retry-on-conflict.js';
export {
  type Scope,
  ScopeSchema,
  type SnapshotSelector,
  SnapshotSelectorSchema,
  type ThreadScope,
} from './foundation/scope.js';
export {
  ExpectedVersionOrAbsentSchema,
  MAX_VERSION,
  RecordVersionSchema,
  type UpsertOptions,
  UpsertOptionsSchema,
  VersionSchema,
  type WriteOptions,
  WriteOptionsSchema,
} from './foundation/version.js';
// Wiring, features and the turn
export * from './kioku/builder.js';
export * from './memory/extraction/index.js';
export * from './memory/facts/all/index.js';
export * from './memory/facts/recall/index.js';
export * from './memory/facts/relevant/index.js';
export * from './memory/feedback/index.js';
export * from './memory/forget/index.js';
export * from './memory/history/index.js';
export * from './memory/knowledge/index.js';
export * from './memory/offload/index.js';
export * from './memory/passes-index.js';
export * from './memory/plans/index.js';
export {
  type DetectOptions,
  detectInjection,
  INJECTION_RULES,
  INJECTION_THRESHOLD,
  type InjectionRule,
  type InjectionVerdict,
  type RuleHit,
} from './memory/trust/detector.js';
export {
  defuse,
  detailSource,
  documentSource,
  MEMORY_NOTICE,
  quoteContent,
  sourceLabel,
} from './memory/trust/fence.js';
export {
  confirmQuarantined,
  dropQuarantined,
  explainMark,
  isQuarantined,
  listQuarantined,
  markUntrusted,
  requarantine,
  trustedFacts,
} from './memory/trust/quarantine.js';
export * from './memory/working/index.js';
export type * from './model/chat-model.js';
export * from './model/execute-tool.js';
export * from './model/messages.js';
export * from './model/seen-versions.js';
export * from './model/structured.js';
export * from './model/tool.js';
export * from './runtime/conversation.js';
export type * from './runtime/feature.js';
export * from './runtime/intent/index.js';
export * from './runtime/intent/recall.js';
export type * from './runtime/ledger.js';
export * from './runtime/middleware.js';
export * from './runtime/token-budget.js';
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
} from './store/bundle/index.js';
export * from './store/details/memory.js';
export * from './store/details/record.js';
// Store contracts, records and their schemas
export type * from './store/details/store.js';
export * from './store/documents/memory.js';
export * from './store/documents/record.js';
export type * from './store/documents/store.js';
export * from './store/embeddings/index.js';
export * from './store/facts/memory.js';
export * from './store/facts/near-duplicate.js';
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
} from './store/facts/record.js';
export type * from './store/facts/store.js';
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
} from './store/hybrid/index.js';
export * from './store/plans/memory.js';
export * from './store/plans/record.js';
export type * from './store/plans/store.js';
export * from './store/sessions/kioku-sessions.js';
export * from './store/sessions/memory.js';
export { SESSION_DEFAULTS, type SessionStoreOptions } from './store/sessions/partitioned.js';
export * from './store/sessions/record.js';
export type * from './store/sessions/store.js';
export { updateKvValue } from './store/sessions/update-value.js';
export {
  type RestoreOptions,
  type RestoreReport,
  SNAPSHOT_FORMAT,
  SNAPSHOT_SCHEMA_VERSION,
  type SnapshotEnvelope,
} from './store/snapshot/envelope.js';
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
} from './store/vector/index.js';
export { InMemoryVectorIndex } from './store/vector/memory.js';
export {
  VECTOR_SNAPSHOT_KIND,
  type VectorPartition,
  type VectorRecord,
  VectorRecordSchema,
  type VectorSnapshot,
} from './store/vector/snapshot.js';
export * from './store/working/memory.js';
export { WORKING_DEFAULTS, type WorkingMemoryOptions } from './store/working/partitioned.js';
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
} from './store/working/record.js';
export type * from './store/working/store.js';
export * from './tokens/tokenizer.js';
