/*
 * `@kioku/core/adapter`: what a storage adapter needs beyond the root entry point — the partition and
 * record seams with the `Partitioned*Store` classes over them, the rule functions native adapters call
 * (every record rule written once), restore and snapshot helpers, validation and the text domain, and
 * the lexical index. See docs/WRITING-AN-ADAPTER.md.
 */

export { isoAt } from './foundation/clock.js';
export { ID_PATTERN, shortId, timeOrderedId } from './foundation/ids.js';
export { categoryMatches, hasAllTags, textSchema } from './foundation/record-fields.js';
export { parseScope, parseThreadScope } from './foundation/scope.js';
export * from './foundation/text-domain.js';
// Validation, scope, ids and time
export * from './foundation/validation.js';
export { checkVersion, parseWriteOptions } from './foundation/version.js';
// Search: lexical index, rank fusion, vectors
export * from './search/analyzer.js';
export * from './search/lexical-index.js';
export * from './search/ranking.js';
// Seams: whole partitions, single records, and the stores over them
export * from './store/backend/memory-backend.js';
export * from './store/backend/partition.js';
export * from './store/backend/record-backend.js';
export * from './store/backend/record-partition.js';
export { once } from './store/bundle/index.js';
export * from './store/details/partitioned.js';
// Record rules
export * from './store/details/rules.js';
export * from './store/documents/chunker.js';
export * from './store/documents/combine.js';
export * from './store/documents/partitioned.js';
export * from './store/documents/rules.js';
export * from './store/facts/partitioned.js';
export { factSearchText, newestUpdatedFirst } from './store/facts/record.js';
export * from './store/facts/rules.js';
export { type FusedItem, type RankedItem, RRF_K, reciprocalRankFusion } from './store/hybrid/fusion.js';
export { VectorSide } from './store/hybrid/vector-side.js';
export * from './store/plans/derived.js';
export * from './store/plans/edits.js';
export * from './store/plans/partitioned.js';
export { PartitionedSessionStore, type SessionCaps, sessionCaps } from './store/sessions/partitioned.js';
export * from './store/sessions/rules.js';
// Snapshots and restore
export { makeEnvelope, parseEnvelope } from './store/snapshot/envelope.js';
export * from './store/snapshot/restore.js';
export { assertDimensions, payloadMatches } from './store/vector/index.js';
export { sortModelCounts } from './store/vector/memory.js';
export { makeVectorSnapshot, parseVectorSnapshot } from './store/vector/snapshot.js';
export {
  PartitionedWorkingMemoryStore,
  type WorkingLimits,
  workingLimits,
} from './store/working/partitioned.js';
export { keyHasPrefix, keyRootOf, namespaceOf } from './store/working/record.js';
export * from './store/working/rules.js';
