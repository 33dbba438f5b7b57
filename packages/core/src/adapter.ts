/*
 * `@kioku/core/adapter`: what a storage adapter needs beyond the root entry point — the partition and
 * record seams with the `Partitioned*Store` classes over them, the rule functions native adapters call
 * (every record rule written once), restore and snapshot helpers, validation and the text domain, and
 * the lexical index. See docs/WRITING-AN-ADAPTER.md.
 */

// Seams: whole partitions, single records, and the stores over them
export * from './backend/memory-backend.js';
export * from './backend/partition.js';
export * from './backend/record-backend.js';
export * from './backend/record-partition.js';
export { isoAt } from './clock.js';
export * from './details/partitioned.js';
// Record rules
export * from './details/rules.js';
export * from './documents/chunker.js';
export * from './documents/combine.js';
export * from './documents/partitioned.js';
export * from './documents/rules.js';
export * from './facts/partitioned.js';
export { factSearchText, newestUpdatedFirst } from './facts/record.js';
export * from './facts/rules.js';
export { type FusedItem, type RankedItem, RRF_K, reciprocalRankFusion } from './hybrid/fusion.js';
export { VectorSide } from './hybrid/vector-side.js';
export { ID_PATTERN, shortId, timeOrderedId } from './ids.js';
export * from './plans/derived.js';
export * from './plans/edits.js';
export * from './plans/partitioned.js';
export { categoryMatches, hasAllTags, textSchema } from './records/common.js';
export * from './records/text-domain.js';
export { checkVersion, parseWriteOptions } from './records/version.js';
export { parseScope, parseThreadScope } from './scope.js';
// Search: lexical index, rank fusion, vectors
export * from './search/analyzer.js';
export * from './search/lexical-index.js';
export * from './search/ranking.js';
export { PartitionedSessionStore, type SessionCaps, sessionCaps } from './sessions/partitioned.js';
export * from './sessions/rules.js';
// Snapshots and restore
export { makeEnvelope, parseEnvelope } from './snapshot/envelope.js';
export * from './snapshot/restore.js';
export { once } from './stores/index.js';
// Validation, scope, ids and time
export * from './validation.js';
export { assertDimensions, payloadMatches } from './vector/index.js';
export { sortModelCounts } from './vector/memory.js';
export { makeVectorSnapshot, parseVectorSnapshot } from './vector/snapshot.js';
export {
  PartitionedWorkingMemoryStore,
  type WorkingLimits,
  workingLimits,
} from './working/partitioned.js';
export { keyHasPrefix, keyRootOf, namespaceOf } from './working/record.js';
export * from './working/rules.js';
