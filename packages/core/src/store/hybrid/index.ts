export { HybridDetailStore, withDetailEmbeddings } from './details.js';
export { HybridDocumentStore, withDocumentEmbeddings } from './documents.js';
export { HybridFactStore, withFactEmbeddings } from './facts.js';
export { type FusedItem, type RankedItem, RRF_K, reciprocalRankFusion } from './fusion.js';
export {
  DEFAULT_TRANSCRIPT_ROLES,
  type HybridKind,
  transcriptVectorId,
} from './kinds.js';
export { type ReembedOptions, type ReembedReport, reembed } from './reembed.js';
export type { ReindexReport } from './reindex.js';
export {
  HybridSessionStore,
  type TranscriptHit,
  type TranscriptQuery,
  TranscriptQuerySchema,
  type TranscriptSearchOptions,
  withTranscriptEmbeddings,
} from './transcript.js';
export { HYBRID_DEFAULTS, type HybridOptions, VectorSide } from './vector-side.js';
