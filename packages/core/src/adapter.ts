/*
 * `@kioku/core/adapter`: what a storage adapter needs beyond `@kioku/core/store` — the partition and
 * record seams with the stores derived from them, the rule functions native adapters call (every record
 * rule written once), restore and snapshot helpers, validation, and the lexical ranking. See
 * docs/WRITING-AN-ADAPTER.md.
 */

// Validation, scope, ids and time
export { isoAt, systemClock } from './foundation/clock.js';
export { ID_PATTERN } from './foundation/ids.js';
export {
  checkOptions,
  checkUrlScheme,
  nearest,
  OptionError,
  type OptionRule,
  type OptionSpec,
  type OptionSpecOf,
} from './foundation/options.js';
export { categoryMatches, hasAllTags } from './foundation/record-fields.js';
export { redactUrl } from './foundation/redact-url.js';
export { parseScope, parseThreadScope } from './foundation/scope.js';
export { parseOrThrow } from './foundation/validation.js';
export { parseWriteOptions } from './foundation/version.js';
export { formatMemoryRef, parseMemoryRef } from './memory/offload/ref.js';
// Search: the lexical index, the ranking every backend scores with, and recall's signals
export { type Analyzer, englishAnalyzer } from './search/analyzer.js';
export {
  type LexicalHit,
  LexicalIndex,
  type LexicalIndexOptions,
  type LexicalIndexState,
  type LexicalSearchOptions,
} from './search/lexical-index.js';
export {
  bm25Idf,
  DEFAULT_BM25,
  DEFAULT_FEEDBACK,
  expandQuery,
  type FeedbackParams,
  feedbackQuery,
  feedbackTerms,
  type PartitionStats,
  type RankCandidate,
  type ScoredCandidate,
  scoreCandidates,
  termCounts,
  termsByRarity,
} from './search/ranking.js';
export {
  type QuerySignals,
  querySignals,
  rerankCandidates,
  type SignalCandidate,
} from './search/signals/rerank.js';
// Seams: whole partitions, single records, and the stores over them
export { MemoryPartitionBackend } from './store/backend/memory-backend.js';
export { InMemoryRecordBackend } from './store/backend/memory-record-backend.js';
export {
  type KeyedRecord,
  type PartitionBackend,
  type PartitionCodec,
  type PartitionRef,
  partitionLabel,
  type TrackedRecords,
} from './store/backend/partition.js';
export {
  DEFAULT_RECORD_LIMIT_BYTES,
  RecordBackedPartitions,
  type RecordBackend,
  type RecordChanges,
  RecordTooLargeError,
  type StoredRecord,
} from './store/backend/record-backend.js';
export { erasePartitions } from './store/backend/snapshot-io.js';
export { once } from './store/bundle/bundle.js';
// The storage seam: what an adapter implements, and the six stores over it
export { type StoresOverBackendOptions, storesOverBackend } from './store/bundle/over-backend.js';
export type {
  ParsedDetailQuery,
  ParsedDocumentQuery,
  ParsedFactFilter,
  ParsedFactQuery,
  StorageBackend,
} from './store/bundle/storage-backend.js';
export { PartitionedDetailStore } from './store/details/partitioned.js';
// Record rules: what each kind is on create and on every change
export {
  type DetailFilter,
  detailExistsError,
  detailIndexEntries,
  listDetails,
  newDetail,
  searchDetails,
  visibleDetail,
} from './store/details/rules.js';
export { combineKnowledge, parseKnowledgeBudget } from './store/documents/combine.js';
export { PartitionedDocumentStore } from './store/documents/partitioned.js';
export {
  chunkIndexEntries,
  chunkSearchText,
  type DocumentChunking,
  type DocumentChunkingOptions,
  documentChunking,
  documentExistsError,
  newDocument,
  searchChunks,
} from './store/documents/rules.js';
export { DelegatingFactStore } from './store/facts/delegating.js';
export { PartitionedFactStore } from './store/facts/partitioned.js';
export { factSearchText, newestUpdatedFirst } from './store/facts/record.js';
export { checkFactVersion, missingFactError, newFact, patchFact } from './store/facts/rules.js';
export { type PlanEditMethods, withPlanEdits } from './store/plans/derived.js';
export {
  checkPlanVersion,
  missingPlanError,
  newPlan,
  type PlanEdit,
  planEdits,
} from './store/plans/edits.js';
export { PartitionedPlanStore } from './store/plans/partitioned.js';
export {
  PartitionedSessionStore,
  SESSION_DEFAULTS,
  type SessionCaps,
  type SessionStoreOptions,
  sessionCaps,
} from './store/sessions/partitioned.js';
export {
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
} from './store/sessions/rules.js';
// Snapshots and restore
export { makeEnvelope, parseEnvelope } from './store/snapshot/envelope.js';
export {
  groupRecords,
  parseSnapshotRecords,
  planRestore,
  type RestoreSpec,
} from './store/snapshot/restore.js';
export {
  type ParsedVectorQuery,
  parseVectorIds,
  parseVectorPoints,
  parseVectorQuery,
  parseVectorSelection,
} from './store/vector/calls.js';
export { sortModelCounts } from './store/vector/memory.js';
export { makeVectorSnapshot, parseVectorSnapshot } from './store/vector/snapshot.js';
export { assertDimensions } from './store/vector/store.js';
export {
  PartitionedWorkingMemoryStore,
  WORKING_DEFAULTS,
  type WorkingLimits,
  type WorkingMemoryOptions,
  workingLimits,
} from './store/working/partitioned.js';
export { keyHasPrefix, keyRootOf, namespaceOf } from './store/working/record.js';
export {
  checkWorkingVersion,
  isWorkingEntryLive,
  namespaceEvictions,
  namespaceFullError,
  newWorkingSet,
  versionedWorkingEntry,
  workingEntryInfo,
  workingQueryMatches,
  workingSearchText,
} from './store/working/rules.js';
// Telemetry: the SQL a store call runs, for `db.query.text` when the app opts in
export { noteQueryText } from './telemetry/query-text.js';
